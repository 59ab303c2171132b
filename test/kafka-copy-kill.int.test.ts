/**
 * On a real broker, a SIGKILL at every step boundary of recording runs and copying their stops
 * and ledger events never loses nor repeats a copy: the writer appends to the runs topic only,
 * and whichever step a writer or the copy projector died after, the next projector of the group
 * leaves exactly one copy of each stop and ledger event visible to read_committed readers (the
 * alert subscriber's view).
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { RegistrySchemaStore } from '../src/events/registry-schema-store.js';
import { TOPICS } from '../src/log/event-log.js';
import { EventStore } from '../src/log/event-store.js';
import { KafkaCopyProjector } from '../src/log/kafka/kafka-copy-projector.js';
import { KafkaLog } from '../src/log/kafka/kafka-log.js';
import { SAMPLE_EVENTS } from './log-sample-events.js';
import { kafkaEnv } from './setup/kafka-env.js';
import { KILL_RUNS, KILL_SESSION_MS } from './support/copy-kill.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const STOPS = SAMPLE_EVENTS.filter((e) => e.type === 'RunStopped').length;
const LEDGER = SAMPLE_EVENTS.filter((e) => e.type.startsWith('Operation')).length;

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

function child(role: 'writer' | 'projector', suffix: string, killAt: string) {
  const env = kafkaEnv();
  const proc = spawn(
    process.execPath,
    ['--import', 'tsx', 'test/kafka-copy-kill-child.ts', role, suffix, killAt],
    {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, KAFKA_BROKERS: env.brokers.join(','), SCHEMA_REGISTRY_URL: env.registryUrl },
    },
  );
  return new Promise<NodeJS.Signals | number | null>((resolve) =>
    proc.on('exit', (code, signal) => resolve(signal ?? code)),
  );
}

/** Event ids of every committed copy on `topic`, per run. */
async function copies(log: KafkaLog, events: EventStore, topic: typeof TOPICS.stops | typeof TOPICS.ledger) {
  const out = new Map<string, string[]>();
  for (const r of await log.readAll(topic)) {
    const e = await events.decode(topic, r.value);
    out.set(e.runId, [...(out.get(e.runId) ?? []), e.eventId]);
  }
  return out;
}

describe('Kafka copies with a SIGKILL at every step boundary', () => {
  const steps = [
    { step: 'runs-durable', who: 'writer' },
    { step: 'copies-sent', who: 'projector' },
    { step: 'committed', who: 'projector' },
    { step: 'none', who: 'projector' },
  ] as const;
  for (const { step, who } of steps) {
    it(`${who} killed after ${step}: each stop and ledger event is copied exactly once`, async () => {
      const suffix = `-${randomUUID()}`;
      expect(await child('writer', suffix, who === 'writer' ? step : 'none')).toBe(
        who === 'writer' ? 'SIGKILL' : 0,
      );
      if (who === 'projector')
        expect(await child('projector', suffix, step)).toBe(step === 'none' ? 0 : 'SIGKILL');
      const env = kafkaEnv();
      const log = await KafkaLog.connect({ brokers: env.brokers, topicSuffix: suffix });
      open.push(log);
      const events = await EventStore.create(log, new RegistrySchemaStore({ url: env.registryUrl }), {
        subjectFor: (t) => `${log.physicalName(t)}-value`,
      });
      // The next projector of the group takes over wherever the dead process stopped.
      const next = await KafkaCopyProjector.start({ log, events, sessionTimeoutMs: KILL_SESSION_MS });
      open.push({ close: () => next.stop() });
      await next.caughtUp(60_000);
      const stops = await copies(log, events, TOPICS.stops);
      const ledger = await copies(log, events, TOPICS.ledger);
      expect([...stops.keys()].sort()).toEqual(KILL_RUNS);
      for (const run of KILL_RUNS) {
        expect(stops.get(run)).toHaveLength(STOPS);
        expect(new Set(stops.get(run)).size).toBe(STOPS);
        expect(ledger.get(run)).toHaveLength(LEDGER);
        expect(new Set(ledger.get(run)).size).toBe(LEDGER);
      }
    }, 120_000);
  }
});
