/**
 * On a real broker, stopping a DecodingConsumer while kafkajs is re-joining its group after a
 * crash (its own restart-on-crash, which the consumer relies on to outlive a broker restart)
 * leaves nothing running: kafkajs's disconnect during that join stops nothing, and the restarted
 * consumer would fetch and heartbeat for good, so the process that stopped it never exits.
 */
import { randomUUID } from 'node:crypto';
import type { Consumer, ConsumerConfig, Kafka } from 'kafkajs';
import { afterEach, describe, expect, it } from 'vitest';
import { TOPICS } from '../src/log/event-log.js';
import { DecodingConsumer } from '../src/log/kafka/decoding-consumer.js';
import { KafkaLog } from '../src/log/kafka/kafka-log.js';
import { kafkaEnv } from './setup/kafka-env.js';

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('DecodingConsumer stop on a real broker', () => {
  it('stopped while its restart after a crash is joining the group, it leaves no consumer running', async () => {
    const log = await KafkaLog.connect({ brokers: kafkaEnv().brokers, topicSuffix: `-${randomUUID()}` });
    open.push(log);
    await log.append(TOPICS.runs, [{ key: 'k', value: Buffer.from('v') }]);

    const seen = { requests: 0, consumers: 0, crashes: 0, disconnectsAfterStop: 0 };
    let stopped: Promise<void> | undefined;
    let subject: DecodingConsumer<Buffer> | undefined;
    const client = Object.create(log.kafka) as Kafka;
    client.consumer = (config: ConsumerConfig) => {
      const c: Consumer = log.kafka.consumer(config);
      seen.consumers++;
      c.on(c.events.CRASH, ({ payload }) => {
        if (payload.restart) seen.crashes++;
      });
      c.on(c.events.REQUEST, ({ payload }) => {
        seen.requests++;
        // kafkajs's restart after the crash is joining (the join ends with a SyncGroup, so it
        // cannot have finished yet): stop now, mid-join.
        if (seen.crashes > 0 && payload.apiName === 'JoinGroup' && stopped === undefined && subject)
          stopped = subject.stop();
      });
      c.on(c.events.DISCONNECT, () => {
        if (stopped !== undefined) seen.disconnectsAfterStop++;
      });
      return c;
    };

    subject = await DecodingConsumer.start(Object.assign(Object.create(log) as KafkaLog, { kafka: client }), {
      topic: TOPICS.runs,
      groupId: `decoding-stop-${randomUUID()}`,
      decode: (v) => v,
      handle: () => {
        // Every delivery fails until the consumer has crashed: kafkajs retries the batch, gives up
        // and restarts the consumer.
        if (seen.crashes === 0) throw new Error('delivery fails');
      },
    });
    while (stopped === undefined) await sleep(50);
    await stopped;
    // stop() waits a bounded time; past that its disconnect follows the join in the background.
    while (seen.disconnectsAfterStop === 0) await sleep(50);
    expect(seen.consumers).toBe(1);
    expect(seen.crashes).toBeGreaterThanOrEqual(1);
    // What a consumer still running after its disconnect does: fetch (every 250 ms) and heartbeat.
    const before = seen.requests;
    await sleep(3_000);
    expect(seen.requests - before).toBe(0);
  }, 60_000);
});
