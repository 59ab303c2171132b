/**
 * A follow of a partition written in transactions reaches the partition's end. The last offsets
 * of such a partition are commit and abort markers (and aborted records), which a consumer never
 * sees as records: a fold that counted records alone waited forever for the end (a run loaded
 * from its stream on the service's runs topic, a ledger read after the copy projector's copies).
 */
import { randomUUID } from 'node:crypto';
import { type Admin, Kafka, logLevel } from 'kafkajs';
import { afterEach, describe, expect, it } from 'vitest';
import { withTimeout } from '../src/log/kafka/kafka-error.js';
import { PartitionFollower } from '../src/log/kafka/partition-follower.js';
import { kafkaEnv } from './setup/kafka-env.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

/** Partition 0's last stable offset once it has reached `atLeast` (at most 15 s). */
async function stableEnd(admin: Admin, topic: string, atLeast: number): Promise<number> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const [end] = await admin.fetchTopicOffsets(topic);
    const high = Number(end?.high);
    if (high >= atLeast || Date.now() > deadline) return high;
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('PartitionFollower on a topic written in transactions', () => {
  it('reaches the end past commit markers and aborted records, and hands over only committed records', async () => {
    const kafka = new Kafka({ brokers: kafkaEnv().brokers, logLevel: logLevel.NOTHING });
    const topic = `follow-txn-${randomUUID().slice(0, 8)}`;
    const admin = kafka.admin();
    await admin.connect();
    cleanups.push(() => admin.disconnect());
    await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 1 }] });
    const producer = kafka.producer({
      transactionalId: `t-${topic}`,
      idempotent: true,
      maxInFlightRequests: 1,
    });
    await producer.connect();
    cleanups.push(() => producer.disconnect());
    const send = async (values: string[], commit: boolean) => {
      const txn = await producer.transaction();
      await txn.send({ topic, messages: values.map((value) => ({ key: 'k', value, partition: 0 })) });
      await (commit ? txn.commit() : txn.abort());
    };
    await send(['a', 'b', 'c'], true);
    await send(['x', 'y'], false);
    await send(['d'], true);
    // 3 records, a marker, 2 aborted records, a marker, 1 record, a marker. The admin reads the
    // last stable offset, which passes a transaction only once its marker is written, and the
    // broker writes markers after `commit()` has returned: wait for the last one.
    const end = await stableEnd(admin, topic, 9);
    expect(end).toBe(9);

    const seen: string[] = [];
    const follower = new PartitionFollower(kafka, topic, 1, (m) => {
      seen.push(m.value.toString());
    });
    cleanups.push(() => follower.close());
    await withTimeout(follower.foldedTo(0, end), 15_000, 'fold to the end');
    expect(seen).toEqual(['a', 'b', 'c', 'd']);

    // And again after more: the end moves, the follow follows.
    await send(['e'], true);
    const later = await stableEnd(admin, topic, 11);
    await withTimeout(follower.foldedTo(0, later), 15_000, 'fold to the new end');
    expect(seen).toEqual(['a', 'b', 'c', 'd', 'e']);
  }, 60_000);
});

describe('PartitionFollower position', () => {
  // KafkaRunStream answers an append check from its own records past position(), onto the heads
  // its handler folded: a position that lagged a handled record by a microtask let an append
  // resolving in between fold that record twice and report a false `conflict` (seen in the
  // kafka-guarded-call bench).
  it('has passed a record as soon as its synchronous handler returns', async () => {
    const kafka = new Kafka({ brokers: kafkaEnv().brokers, logLevel: logLevel.NOTHING });
    const topic = `follow-pos-${randomUUID().slice(0, 8)}`;
    const admin = kafka.admin();
    await admin.connect();
    cleanups.push(() => admin.disconnect());
    await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 1 }] });
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    cleanups.push(() => producer.disconnect());
    await producer.send({ topic, acks: -1, messages: ['a', 'b', 'c'].map((value) => ({ key: 'k', value })) });

    const lagged: number[] = [];
    const follower: PartitionFollower = new PartitionFollower(kafka, topic, 1, (m) => {
      // Whatever runs next (another promise's continuation) must see this record passed.
      queueMicrotask(() => {
        if (follower.position(0) <= m.offset) lagged.push(m.offset);
      });
    });
    cleanups.push(() => follower.close());
    await withTimeout(follower.foldedTo(0, 3), 15_000, 'fold to the end');
    expect(lagged).toEqual([]);
  }, 60_000);
});
