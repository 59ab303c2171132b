/**
 * A transactional producer on a real broker keeps the coordinators it found for a while
 * (COORDINATOR_TTL_MS), not looking them up four times per transaction (kafkajs-coordinator-cache.ts): what a
 * `serve` worker's batch waits for is the transaction's own requests.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { KafkaLog } from '../src/log/kafka/kafka-log.js';
import { COORDINATOR_TTL_MS } from '../src/log/kafka/kafkajs-coordinator-cache.js';
import { transactionalProducer } from '../src/log/kafka/transactional-producer.js';
import { kafkaEnv } from './setup/kafka-env.js';

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

describe('coordinator lookups of a transactional producer', () => {
  it('are kept across transactions, not repeated in each', async () => {
    const env = kafkaEnv();
    const log = await KafkaLog.connect({ brokers: env.brokers, clientId: 'coordinator-cache' });
    open.push(log);
    const topic = `coordinator-cache-${randomUUID()}`;
    const admin = log.kafka.admin();
    await admin.connect();
    open.push({
      close: async () => {
        await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
        await admin.disconnect();
      },
    });
    await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 1 }] });
    const producer = await transactionalProducer(log, `coordinator-cache-${randomUUID()}`);
    open.push({ close: () => producer.disconnect() });
    const requests: string[] = [];
    producer.on(producer.events.REQUEST, (e) => requests.push(e.payload.apiName));
    const TRANSACTIONS = 10;
    const started = Date.now();
    for (let i = 0; i < TRANSACTIONS; i++) {
      const txn = await producer.transaction();
      await txn.send({ topic, messages: [{ key: 'k', value: String(i) }], acks: -1 });
      await txn.sendOffsets({
        consumerGroupId: `g-${topic}`,
        topics: [{ topic, partitions: [{ partition: 0, offset: String(i + 1) }] }],
      });
      await txn.commit();
    }
    const windows = 1 + Math.ceil((Date.now() - started) / COORDINATOR_TTL_MS);
    const count = (api: string) => requests.filter((name) => name === api).length;
    // Two coordinators (the transaction's and the group's), found again once per
    // COORDINATOR_TTL_MS, or after kafkajs refreshed its metadata (as it does when the broker
    // answers a retriable error, e.g. a transaction begun before the last one's markers were
    // written); kafkajs alone looks both up again in every transaction, twice (40 here).
    const lookups = count('GroupCoordinator');
    expect(lookups, requests.join(' ')).toBeLessThanOrEqual(2 * (windows + count('Metadata')));
    expect(lookups, requests.join(' ')).toBeLessThan(4 * TRANSACTIONS);
    expect(requests.filter((name) => name === 'EndTxn')).toHaveLength(TRANSACTIONS);
  }, 60_000);
});
