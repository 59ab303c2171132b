/**
 * Two copy projectors of one group on a real broker: they share one transactional id, so the one
 * that registered it last fences the other, which stops (`ended`) instead of taking it back; the
 * one left copies every stop exactly once.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it, onTestFailed } from 'vitest';
import { RegistrySchemaStore } from '../src/events/registry-schema-store.js';
import { TOPICS } from '../src/log/event-log.js';
import { EventStore } from '../src/log/event-store.js';
import { KafkaCopyProjector } from '../src/log/kafka/kafka-copy-projector.js';
import { KafkaLog } from '../src/log/kafka/kafka-log.js';
import { KafkaRunStream } from '../src/log/kafka/kafka-run-stream.js';
import { SAMPLE_EVENTS } from './log-sample-events.js';
import { kafkaEnv } from './setup/kafka-env.js';
import { runEvents } from './support/run-events.js';
import { until } from './support/until.js';

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

describe('copy projectors of one group', () => {
  it('the newer fences the older, which stops; each stop is copied once', async () => {
    const env = kafkaEnv();
    const log = await KafkaLog.connect({ brokers: env.brokers, topicSuffix: `-${randomUUID()}` });
    open.push(log);
    const events = await EventStore.create(log, new RegistrySchemaStore({ url: env.registryUrl }), {
      subjectFor: (t) => `${log.physicalName(t)}-value`,
    });
    const stream = new KafkaRunStream(events, log);
    open.push(stream);
    // What each projector did (takeovers, fences, aborted transactions), shown when the test fails.
    const lines: string[] = [];
    onTestFailed(() => console.error(lines.join('\n')));
    // Each projector's newest assignment, and the partitions of it taken over since (its
    // transactional id registered, fencing whoever registered it before), from its log.
    const assigned = new Map<string, number[]>();
    const takenOver = new Map<string, Set<number>>();
    let n = 0;
    const start = async () => {
      const name = ++n === 1 ? 'older' : 'newer';
      const p = await KafkaCopyProjector.start({
        log,
        events,
        sessionTimeoutMs: 6_000,
        onLog: (line) => {
          lines.push(`${new Date().toISOString()} ${name}: ${line}`);
          const got = /assigned runs partitions \[([0-9,]*)\]/.exec(line)?.[1];
          if (got !== undefined) {
            assigned.set(name, got === '' ? [] : got.split(',').map(Number));
            takenOver.set(name, new Set());
          }
          const folded = /runs partition ([0-9]+): [0-9]+ runs folded/.exec(line)?.[1];
          if (folded !== undefined) takenOver.get(name)?.add(Number(folded));
        },
        onStep: (step, partition) => lines.push(`${new Date().toISOString()} ${name}: ${step} p${partition}`),
      });
      open.push({ close: () => p.stop() });
      return p;
    };
    // Runs on every runs partition: whichever partitions the fenced projector holds, it has a
    // batch to commit, and learns it was fenced.
    const partitions = (await log.partitionEnds(TOPICS.runs)).length;
    const RUNS: string[] = [];
    const covered = new Set<number>();
    for (let i = 0; covered.size < partitions || RUNS.length < 2; i++) {
      const run = `fence-${i}`;
      const p = await log.partitionOfKey(TOPICS.runs, run);
      if (RUNS.length === 0 || !covered.has(p)) RUNS.push(run);
      if (RUNS.length > 1) covered.add(p);
    }
    const older = await start();
    await stream.appendToStream(RUNS[0] as string, runEvents(RUNS[0] as string, 0, SAMPLE_EVENTS.length), {
      expectedStreamVersion: 0,
    });
    await older.caughtUp();
    const newer = await start();
    // Both hold their share of the partitions, and have taken it over, before the runs go in:
    // records copied before the rebalance, or before the last of the two registered the id (the
    // other would commit them unfenced), would leave neither a batch to learn the fence by.
    const holds = (name: string) => {
      const mine = assigned.get(name) ?? [];
      return mine.length > 0 && mine.every((p) => takenOver.get(name)?.has(p) === true);
    };
    await until(
      'the older and the newer sharing the runs partitions, each having taken its share over',
      () => {
        const [o, w] = [assigned.get('older') ?? [], assigned.get('newer') ?? []];
        return o.length + w.length === partitions && holds('older') && holds('newer');
      },
      { log: () => lines.join('\n') },
    );
    for (const run of RUNS.slice(1))
      await stream.appendToStream(run, runEvents(run, 0, SAMPLE_EVENTS.length), { expectedStreamVersion: 0 });
    // Bounded, so a pair in which neither learns it was fenced fails here with its logs.
    let waited: NodeJS.Timeout | undefined;
    const ended = await Promise.race([
      older.ended.then(() => 'older'),
      newer.ended.then(() => 'newer'),
      new Promise<never>((_, reject) => {
        waited = setTimeout(() => reject(new Error('neither projector was fenced within 45 s')), 45_000);
      }),
    ]).finally(() => clearTimeout(waited));
    const survivor = ended === 'older' ? newer : older;
    const fenced = ended === 'older' ? older : newer;
    // The fenced one copies nothing more: its caughtUp says so at once instead of waiting.
    await expect(fenced.caughtUp(5_000)).rejects.toThrow(/fenced by another projector/);
    await survivor.caughtUp();
    const stops = new Map<string, number>();
    for (const r of await log.readAll(TOPICS.stops)) {
      const e = await events.decode(TOPICS.stops, r.value);
      stops.set(e.eventId, (stops.get(e.eventId) ?? 0) + 1);
    }
    const expected = RUNS.flatMap((run) =>
      runEvents(run, 0, SAMPLE_EVENTS.length)
        .filter((e) => e.event.type === 'RunStopped')
        .map((e) => e.eventId),
    );
    expect([...stops.keys()].sort()).toEqual(expected.sort());
    expect([...stops.values()].every((n) => n === 1)).toBe(true);
  }, 120_000);
});
