/**
 * Kafka-specific behaviour of KafkaLog beyond the shared contract: topic configs, batching of
 * concurrent appends, the multi-partition rules, and a rough publish throughput.
 */
import { randomUUID } from 'node:crypto';
import { ConfigResourceTypes } from 'kafkajs';
import { afterEach, describe, expect, it } from 'vitest';
import { TOPICS } from '../src/log/event-log.js';
import { KafkaLog } from '../src/log/kafka/kafka-log.js';
import { DEFAULT_PARTITIONS } from '../src/log/kafka/topic-layout.js';
import { kafkaEnv } from './setup/kafka-env.js';

const logs: KafkaLog[] = [];
afterEach(async () => {
  for (const log of logs.splice(0)) await log.close();
});

async function connect(extra: Partial<Parameters<typeof KafkaLog.connect>[0]> = {}): Promise<KafkaLog> {
  const log = await KafkaLog.connect({
    brokers: kafkaEnv().brokers,
    topicSuffix: `-${randomUUID()}`,
    ...extra,
  });
  logs.push(log);
  return log;
}

const rec = (key: string, i: number) => ({ key, value: Buffer.from(`v${i}`) });

describe('KafkaLog on a real broker', () => {
  it('creates the ledger compacted and the runs topic with infinite retention', async () => {
    const log = await connect();
    const ledger = await log.prepare(TOPICS.ledger);
    const runs = await log.prepare(TOPICS.runs);
    const admin = log.kafka.admin();
    await admin.connect();
    try {
      const { resources } = await admin.describeConfigs({
        includeSynonyms: false,
        resources: [ledger.name, runs.name].map((name) => ({
          type: ConfigResourceTypes.TOPIC,
          name,
          configNames: ['cleanup.policy', 'retention.ms'],
        })),
      });
      const value = (i: number, n: string) =>
        resources[i]?.configEntries.find((c) => c.configName === n)?.configValue;
      expect(value(0, 'cleanup.policy')).toBe('compact');
      expect(value(1, 'cleanup.policy')).toBe('delete');
      expect(value(1, 'retention.ms')).toBe('-1');
    } finally {
      await admin.disconnect();
    }
  });

  it('gives concurrent appends distinct, dense offsets in call order per append', async () => {
    const log = await connect({ lingerMs: 5, partitions: { [TOPICS.runs]: 1 } });
    const topic = TOPICS.runs;
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        log.append(topic, [rec(`run-${i}`, 2 * i), rec(`run-${i}`, 2 * i + 1)]),
      ),
    );
    const all = results.flat().sort((a, b) => a - b);
    expect(all).toEqual(Array.from({ length: 100 }, (_, i) => i));
    for (const [a, b] of results) expect(b).toBe((a ?? -1) + 1);
    const read = await log.read(topic, 0);
    for (const [i, [a]] of results.entries()) expect(read[a ?? -1]?.value.toString()).toBe(`v${2 * i}`);
  });

  it('partitions the runs topic by default, keeps per-key order there and refuses single-offset reads', async () => {
    const log = await connect();
    expect((await log.prepare(TOPICS.runs)).partitions).toBe(DEFAULT_PARTITIONS[TOPICS.runs]);
    expect(DEFAULT_PARTITIONS[TOPICS.runs]).toBeGreaterThan(1);
    const keys = ['run-a', 'run-b', 'run-c', 'run-d'];
    for (let i = 0; i < 5; i++)
      await log.append(
        TOPICS.runs,
        keys.map((k) => rec(k, i)),
      );
    await expect(log.read(TOPICS.runs, 0)).rejects.toMatchObject({ code: 'partitioned_topic' });
    await expect(log.endOffset(TOPICS.runs)).rejects.toMatchObject({ code: 'partitioned_topic' });
    const all = await log.readAll(TOPICS.runs);
    expect(all).toHaveLength(20);
    expect(new Set(all.map((r) => r.partition)).size).toBeGreaterThan(1);
    for (const k of keys) {
      const mine = all.filter((r) => r.key === k);
      expect(new Set(mine.map((r) => r.partition)).size).toBe(1);
      expect(mine.map((r) => r.value.toString())).toEqual(['v0', 'v1', 'v2', 'v3', 'v4']);
      expect((await log.readKey(TOPICS.runs, k)).map((r) => r.value.toString())).toEqual(
        mine.map((r) => r.value.toString()),
      );
    }
  });

  it('refuses more than one partition for stops and dlq', async () => {
    await expect(connect({ partitions: { [TOPICS.stops]: 2 } })).rejects.toThrow(/exactly 1 partition/);
  });

  it('publishes 10k small records in batches (rough throughput) and acks a lone append quickly', async () => {
    const log = await connect({ partitions: { [TOPICS.runs]: 1 } });
    await log.prepare(TOPICS.runs);
    const n = 10_000;
    const perAppend = 10;
    const started = performance.now();
    const pending: Promise<number[]>[] = [];
    for (let i = 0; i < n; i += perAppend) {
      const records = Array.from({ length: perAppend }, (_, j) => rec(`run-${i % 97}`, i + j));
      pending.push(log.append(TOPICS.runs, records));
    }
    const offsets = (await Promise.all(pending)).flat();
    const seconds = (performance.now() - started) / 1000;
    expect(new Set(offsets).size).toBe(n);
    expect(await log.endOffset(TOPICS.runs)).toBe(n);

    const lone: number[] = [];
    for (let i = 0; i < 100; i++) {
      const t0 = performance.now();
      await log.append(TOPICS.runs, [rec('run-lone', i)]);
      lone.push(performance.now() - t0);
    }
    lone.sort((a, b) => a - b);
    console.log(
      `[kafka-log] ${n} records (${n / perAppend} concurrent appends) in ${seconds.toFixed(2)} s = ` +
        `${Math.round(n / seconds)} records/s; sequential 1-record append p50 ${lone[50]?.toFixed(1)} ms, ` +
        `p95 ${lone[95]?.toFixed(1)} ms`,
    );
  });
});
