/**
 * Follows the decisions topic from its end at connect time and hands each decision to the
 * request waiting for it. One consumer (its own group, never committed) serves every run of the
 * client; positions are set to the end offsets read BEFORE the first request goes out, so no
 * decision can slip past between subscribing and sending.
 */
import { randomUUID } from 'node:crypto';
import type { Admin, Consumer } from 'kafkajs';
import { LoopguardError } from '../domain/index.js';
import type { KafkaLog } from '../log/kafka/kafka-log.js';
import type { ServiceCodec } from '../service/service-codec.js';
import { SERVICE_TOPICS, type WireDecision } from '../service/service-topics.js';

interface Waiter {
  readonly resolve: (d: WireDecision) => void;
  readonly timer: NodeJS.Timeout;
}

export class DecisionWaiters {
  private readonly waiters = new Map<string, Waiter>();

  private constructor(private readonly consumer: Consumer) {}

  static async follow(
    log: KafkaLog,
    decisions: ServiceCodec<WireDecision>,
    admin: Admin,
  ): Promise<DecisionWaiters> {
    const topic = log.physicalName(SERVICE_TOPICS.decisions);
    const ends = await admin.fetchTopicOffsets(topic);
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

  /** Resolves with the decision for `requestId`; rejects with `decision_timeout` after timeoutMs. */
  wait(requestId: string, timeoutMs: number): Promise<WireDecision> {
    return new Promise<WireDecision>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(requestId);
        reject(
          new LoopguardError(
            'decision_timeout',
            `no decision for request ${requestId} within ${timeoutMs} ms; nothing was executed`,
            { retriable: true, details: { requestId } },
          ),
        );
      }, timeoutMs);
      this.waiters.set(requestId, { resolve, timer });
    });
  }

  private deliver(d: WireDecision): void {
    const w = this.waiters.get(d.request_id);
    if (w === undefined) return;
    this.waiters.delete(d.request_id);
    clearTimeout(w.timer);
    w.resolve(d);
  }

  async close(): Promise<void> {
    for (const w of this.waiters.values()) clearTimeout(w.timer);
    this.waiters.clear();
    await this.consumer.disconnect().catch(() => undefined);
  }
}
