/**
 * kafka-guarded-call: a guarded call on Kafka, durable before the tool runs (createGuard over
 * KafkaLog as a user connects it, the runs topic partitioned; a no-op tool), against one bare acks=all
 * produce round trip of a 400-byte record with kafkajs's idempotent producer, measured in the
 * same process, one of each in turn (alternating which goes first, each from a quiet client).
 * The guarded call's append check (what fences a second writer) is answered from the writer's
 * own acked records when no other writer's record is in between, so it waits for the ack only.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RegistrySchemaStore } from '../src/events/registry-schema-store.js';
import { KafkaLog } from '../src/log/kafka/kafka-log.js';
import { createGuard } from '../src/runtime/index.js';
import { type Bench, percentile, result } from './bench-result.js';
import { BENCH_SECRET_KEY } from './serve-workers.js';
import { argsOf, unbounded } from './synthetic.js';

const WARMUP = 30;
const SETTLE_MS = 3;
const settle = () => new Promise((r) => setTimeout(r, SETTLE_MS));
const CALLS = 300;

export const kafkaGuardedCallBench: Bench = {
  name: 'kafka-guarded-call',
  async run(ctx) {
    const target = await ctx.kafka();
    const dir = mkdtempSync(join(tmpdir(), 'lg-bench-kafka-call-'));
    const prefix = `bench-call-${randomUUID()}.`;
    const log = await KafkaLog.connect({ brokers: target.brokers, topicPrefix: prefix });
    const producer = log.kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    try {
      const floorTopic = (await log.prepare('bare')).name;
      await producer.connect();
      const guard = await createGuard({
        policy: unbounded,
        dataDir: dir,
        // Its own throwaway topics: a fixed key is enough, and a fresh clone has none set.
        secretKey: BENCH_SECRET_KEY,
        log,
        schemaStore: new RegistrySchemaStore({ url: target.registryUrl }),
      });
      const run = await guard.startRun({ runId: 'kafka-durable' });
      const block = Buffer.alloc(400, 7);
      const ours: number[] = [];
      const floor: number[] = [];
      const call = async (i: number) => {
        const t0 = performance.now();
        const r = await run.call({ tool: 'search', args: argsOf(i) }, () => 'ok');
        if (r.status !== 'executed') throw new Error(`call ${i} was ${r.status}`);
        return (performance.now() - t0) * 1000;
      };
      const produce = async () => {
        const t0 = performance.now();
        await producer.send({ topic: floorTopic, acks: -1, messages: [{ key: 'k', value: block }] });
        return (performance.now() - t0) * 1000;
      };
      for (let i = 0; i < WARMUP + CALLS; i++) {
        // Each side starts from a quiet client (the fold of the last batch, the last ack's
        // bookkeeping done) and goes first every other time, so neither pays for the other.
        const first = i % 2 === 0 ? await call(i) : await produce();
        await settle();
        const second = i % 2 === 0 ? await produce() : await call(i);
        await settle();
        if (i < WARMUP) continue;
        ours.push(i % 2 === 0 ? first : second);
        floor.push(i % 2 === 0 ? second : first);
      }
      await guard.close();
      const base = 'one acks=all produce of 400 B (kafkajs, idempotent)';
      return [
        result('kafka-guarded-call p50', 'us', percentile(ours, 50), base, percentile(floor, 50)),
        result('kafka-guarded-call p99', 'us', percentile(ours, 99), base, percentile(floor, 99)),
      ];
    } finally {
      await producer.disconnect().catch(() => undefined);
      await log.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
