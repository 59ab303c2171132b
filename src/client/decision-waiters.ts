/**
 * Follows the decisions topic from its end at connect time and hands each decision to the
 * request waiting for it. One consumer (its own group, never committed) serves every run of the
 * client; positions are set to the end offsets read BEFORE the first request goes out, so no
 * decision can slip past between subscribing and sending.
 */
import { randomUUID } from 'node:crypto';
import type { Admin, Consumer } from 'kafkajs';
import type { KafkaLog } from '../log/kafka/kafka-log.js';
import { fetchTopicOffsets } from '../log/kafka/topic-registry.js';
import type { ServiceCodec } from '../service/service-codec.js';
import { SERVICE_TOPICS, type WireDecision } from '../service/service-topics.js';
import { PendingDecisions } from './pending-decisions.js';

export class DecisionWaiters extends PendingDecisions {
  private constructor(private readonly consumer: Consumer) {
    super();
  }

  static async follow(
    log: KafkaLog,
    decisions: ServiceCodec<WireDecision>,
    admin: Admin,
  ): Promise<DecisionWaiters> {
    const topic = log.physicalName(SERVICE_TOPICS.decisions);
    const ends = await fetchTopicOffsets(admin, topic);
    const consumer = log.consumer({ groupId: `loopguard-client-${randomUUID()}`, maxWaitTimeInMs: 20 });
    const self = new DecisionWaiters(consumer);
    const joined = new Promise<void>((resolve) => {
      consumer.on(consumer.events.GROUP_JOIN, () => {
        for (const e of ends) consumer.seek({ topic, partition: e.partition, offset: e.high });
        resolve();
      });
    });
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: false });
    await consumer.run({
      autoCommit: false,
      partitionsConsumedConcurrently: ends.length,
      eachBatch: async ({ batch }) => {
        for (const m of batch.messages) {
          if (m.value === null) continue;
          // A decision this client cannot decode is someone else's problem, not a reason to stop.
          const d = await decisions.decode(m.value).catch(() => null);
          if (d !== null) self.deliver(d);
        }
      },
    });
    await joined;
    return self;
  }

  async close(): Promise<void> {
    this.clear();
    await this.consumer.disconnect().catch(() => undefined);
  }
}
