/**
 * The CLI on the real broker and registry: `replay --kafka` publishes every event of every run in
 * per-run order, `rebuild --kafka` prints the same per-run JSON as the live replay, and audit,
 * stops and the environment-selected Kafka mode read the same topics. Each test its own prefix.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type MainOptions, main } from '../src/cli/main.js';
import { RegistrySchemaStore } from '../src/events/registry-schema-store.js';
import { TOPICS } from '../src/log/event-log.js';
import { EventStore } from '../src/log/event-store.js';
import { KafkaLog } from '../src/log/kafka/kafka-log.js';
import { kafkaEnv } from './setup/kafka-env.js';
import { captureIo } from './support/capture-io.js';

const fixture = (name: string) => join(import.meta.dirname, 'fixtures', name);
const examples = join(import.meta.dirname, '..', 'examples');

function kafkaArgs(prefix: string): string[] {
  const { brokers, registryUrl } = kafkaEnv();
  return ['--kafka', '--brokers', brokers.join(','), '--registry', registryUrl, '--topic-prefix', prefix];
}

/** Workers of one cluster share the key of secret values. */
const KEY = 'kafka-cli-test-key';

async function run(args: string[], opts: MainOptions = { env: { LOOPGUARD_SECRET_KEY: KEY } }) {
  const io = captureIo();
  const code = await main(args, io, opts);
  return { code, out: io.stdout(), err: io.stderr() };
}

const lines = (out: string) => out.trim().split('\n');

describe('loopguard CLI on Kafka', () => {
  it('replay --kafka without LOOPGUARD_SECRET_KEY is a clear error, and writes nothing', async () => {
    const kafka = kafkaArgs(`cli-${randomUUID()}.`);
    await expect(
      run(['replay', fixture('mixed.jsonl'), '--json', ...kafka], { env: {} }),
    ).rejects.toMatchObject({
      code: 'secret_key_required',
      message: expect.stringContaining('LOOPGUARD_SECRET_KEY'),
    });
    const rebuilt = await run(['rebuild', '--json', ...kafka]);
    expect(JSON.parse(lines(rebuilt.out).at(-1) ?? '{}')).toMatchObject({ runs: 0, events: 0 });
  });

  it('rebuild --kafka prints exactly the per-run JSON replay --kafka printed', async () => {
    const kafka = kafkaArgs(`cli-${randomUUID()}.`);
    const replay = await run([
      'replay',
      join(examples, 'runs.jsonl'),
      fixture('mixed.jsonl'),
      '--policy',
      join(examples, 'policy.json'),
      '--json',
      ...kafka,
    ]);
    expect(replay.err).toBe('');
    expect(replay.code).toBe(0);
    const live = lines(replay.out);
    expect(live.length).toBeGreaterThanOrEqual(10);

    const rebuild = await run(['rebuild', '--json', ...kafka]);
    expect(rebuild.code).toBe(0);
    const rebuilt = lines(rebuild.out);
    // The runs topic is partitioned: a rebuild meets the runs partition by partition, not in input order.
    expect(rebuilt.slice(0, -1).sort()).toEqual([...live].sort());
    const counts = JSON.parse(rebuilt.at(-1) ?? '{}');
    expect(counts).toMatchObject({ runs: live.length });
    expect(counts.events).toBeGreaterThan(live.length);
  });

  it('writes every request, decision, result and stop in per-run order, under subjects of the real topics', async () => {
    const prefix = `cli-${randomUUID()}.`;
    const { brokers, registryUrl } = kafkaEnv();
    const replay = await run(['replay', fixture('mixed.jsonl'), '--json', ...kafkaArgs(prefix)]);
    expect(replay.code).toBe(0);
    // The stops and ledger copies are derived from the runs topic by the copy projector.
    expect((await run(['project', '--once', ...kafkaArgs(prefix)])).code).toBe(0);

    const log = await KafkaLog.connect({ brokers, topicPrefix: prefix });
    try {
      // Asked subject by subject: a shared registry's full listing is cut at 1,000 subjects.
      for (const t of [TOPICS.runs, TOPICS.stops, TOPICS.ledger])
        expect((await fetch(`${registryUrl}/subjects/${prefix}${t}-value/versions`)).status).toBe(200);
      const store = await EventStore.create(log, new RegistrySchemaStore({ url: registryUrl }), {
        subjectFor: (t) => `${log.physicalName(t)}-value`,
      });
      const byRun = new Map<string, { seq: number; type: string }[]>();
      for (const r of await log.readAll(TOPICS.runs)) {
        const e = await store.decode(TOPICS.runs, r.value);
        expect(r.key).toBe(e.runId);
        byRun.set(e.runId, [...(byRun.get(e.runId) ?? []), { seq: e.seq, type: e.event.type }]);
      }
      expect([...byRun.keys()].sort()).toEqual(
        lines(replay.out)
          .map((l) => JSON.parse(l).run_id)
          .sort(),
      );
      for (const events of byRun.values()) {
        expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
        const types = new Set(events.map((e) => e.type));
        for (const t of [
          'RunStarted',
          'ToolCallRequested',
          'GuardDecided',
          'ToolCallCompleted',
          'RunStopped',
        ])
          expect(types).toContain(t);
      }
      const stops = [];
      for await (const e of store.readStops(0)) stops.push(e.runId);
      expect(stops.sort()).toEqual([...byRun.keys()].sort());
    } finally {
      await log.close();
    }
  });

  it('audit, stops and a second replay read the same topics', async () => {
    const kafka = kafkaArgs(`cli-${randomUUID()}.`);
    expect((await run(['replay', fixture('mixed.jsonl'), ...kafka])).code).toBe(0);
    expect((await run(['project', '--once', ...kafka])).code).toBe(0);

    const audit = await run(['audit', 'fx/repeat', ...kafka]);
    expect(audit.code).toBe(0);
    expect(audit.out).toMatch(/stop_partial by exact_repeat/);

    const stops = await run(['stops', '--json', ...kafka]);
    expect(lines(stops.out).map((l) => JSON.parse(l).run_id)).toContain('fx/repeat');

    const again = await run(['replay', fixture('mixed.jsonl'), ...kafka]);
    expect(again.code).toBe(1);
    expect(again.err).toMatch(/run_id fx\/repeat: already recorded in kafka .*--topic-prefix/);
  });

  it('KAFKA_BROKERS and SCHEMA_REGISTRY_URL select Kafka; an explicit --data-dir keeps the embedded log', async () => {
    const { brokers, registryUrl } = kafkaEnv();
    const prefix = `cli-${randomUUID()}.`;
    const env = {
      KAFKA_BROKERS: brokers.join(','),
      SCHEMA_REGISTRY_URL: registryUrl,
      LOOPGUARD_SECRET_KEY: KEY,
    };
    const published = await run(['replay', fixture('mixed.jsonl'), '--json', '--topic-prefix', prefix], {
      env,
    });
    expect(published.code).toBe(0);
    const rebuilt = await run(['rebuild', '--json', '--kafka', '--topic-prefix', prefix], { env });
    expect(lines(rebuilt.out).slice(0, -1).sort()).toEqual(lines(published.out).sort());

    const dir = mkdtempSync(join(tmpdir(), 'lg-kafka-cli-'));
    try {
      // The embedded store under the same env: the replay lands in the data dir's database, and
      // the rebuild of that dir sees exactly those runs.
      const local = await run(['replay', fixture('mixed.jsonl'), '--json', '--data-dir', dir], { env });
      expect(local.code).toBe(0);
      expect(existsSync(join(dir, 'loopguard.db'))).toBe(true);
      const embedded = await run(['rebuild', '--json', '--data-dir', dir], { env });
      expect(lines(embedded.out).slice(0, -1).sort()).toEqual(lines(local.out).sort());
      expect(JSON.parse(lines(embedded.out).at(-1) ?? '{}')).toMatchObject({
        runs: lines(local.out).length,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
