/**
 * The rebuild baseline: a kafkajs consumer that reads a topic from the beginning to its current
 * end and does nothing with the records (eachBatch, counting only). It pays what any Kafka reader
 * pays (group join, fetches, record-batch decoding in kafkajs) and nothing of loopguard's.
 */
import { randomUUID } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import { fixKafkajsRequestQueue } from '../src/log/kafka/kafkajs-request-queue.js';

export interface NoopConsume {
  readonly records: number;
  readonly ms: number;
}

/** Reads `topic` (a physical name) up to the end offsets it had when called. */
export async function noopConsume(
  brokers: readonly string[],
  topic: string,
  timeoutMs = 300_000,
): Promise<NoopConsume> {
  fixKafkajsRequestQueue(); // as loopguard's own clients run, so the baseline is like for like
  const started = performance.now();
  const kafka = new Kafka({
    clientId: 'loopguard-bench-noop',
    brokers: [...brokers],
    logLevel: logLevel.NOTHING,
  });
  const admin = kafka.admin();
  const consumer = kafka.consumer({
    groupId: `loopguard-bench-noop-${randomUUID()}`,
    allowAutoTopicCreation: false,
  });
  try {
    await admin.connect();
    const open = new Map<number, number>();
    for (const o of await admin.fetchTopicOffsets(topic))
      if (Number(o.high) > Number(o.low)) open.set(o.partition, Number(o.high));
    await admin.disconnect();
    let records = 0;
    if (open.size > 0) {
      await consumer.connect();
      await consumer.subscribe({ topics: [topic], fromBeginning: true });
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no-op consumer: ${topic} not read within ${timeoutMs} ms`)),
          timeoutMs,
        );
        consumer
          .run({
            autoCommit: false,
            eachBatch: async ({ batch }) => {
              records += batch.messages.length;
              const end = open.get(batch.partition);
              if (end !== undefined && Number(batch.lastOffset()) >= end - 1) open.delete(batch.partition);
              if (open.size === 0) {
                clearTimeout(timer);
                resolve();
              }
            },
          })
          .catch(reject);
      });
    }
    return { records, ms: performance.now() - started };
  } finally {
    await Promise.allSettled([consumer.disconnect(), admin.disconnect()]);
  }
}
