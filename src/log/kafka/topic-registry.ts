/**
 * Creates topics on first use and remembers what they look like. Creating with explicit configs
 * (rather than relying on broker auto-creation) is what makes the ledger compacted and the runs
 * topic keep its history; an existing topic is taken as it is, with its own partition count.
 */
import kafkajs, { type Admin } from 'kafkajs';
import { kafkaError } from './kafka-error.js';
import { KAFKA_RETRY, type KafkaRetryPolicy, withKafkaRetry } from './kafka-retry.js';
import type { TopicLayout } from './topic-layout.js';

export interface TopicInfo {
  /** The physical Kafka topic name. */
  readonly name: string;
  readonly partitions: number;
}

export interface PartitionOffsets {
  readonly partition: number;
  /** First offset still in the log (after retention/compaction). */
  readonly low: number;
  /** Offset the next record will get. */
  readonly high: number;
}

/**
 * kafkajs's `fetchTopicOffsets` under the adapter's retry policy: kafkajs gives up on the first
 * NOT_LEADER_OR_FOLLOWER (a leader being elected or moved), which a later attempt gets past.
 */
export function fetchTopicOffsets(
  admin: Admin,
  topic: string,
  policy: KafkaRetryPolicy = KAFKA_RETRY,
): ReturnType<Admin['fetchTopicOffsets']> {
  return withKafkaRetry(
    `fetching offsets of ${topic}`,
    () => admin.fetchTopicOffsets(topic).catch(leaderLost),
    { policy },
  );
}

/**
 * kafkajs asks for the high and the low offsets in two requests, sent to each partition's leader
 * as its metadata knows them, and takes each answer with `.pop()`. When it knows no leader for
 * the topic at the second request (a leader moving, or the client's metadata refreshed between
 * the two), that answer is empty and kafkajs throws a TypeError, not a Kafka error. It is the
 * transient state NOT_LEADER_OR_FOLLOWER names, so it is retried as one. (kafkajs's error classes
 * are not named exports Node's ESM loader can see: they come through the default import.)
 */
function leaderLost(e: unknown): never {
  if (e instanceof TypeError && e.message.includes('.pop(...)'))
    throw new kafkajs.KafkaJSError(e, { retriable: true });
  throw e;
}

const CREATE_ATTEMPTS = 8;
const CREATE_BACKOFF_MS = 300;

export class TopicRegistry {
  private readonly known = new Map<string, Promise<TopicInfo>>();

  constructor(
    private readonly admin: Admin,
    private readonly layout: TopicLayout,
    private readonly retry: KafkaRetryPolicy = KAFKA_RETRY,
  ) {}

  ensure(logical: string): Promise<TopicInfo> {
    let info = this.known.get(logical);
    if (info === undefined) {
      info = this.create(logical);
      this.known.set(logical, info);
      // A failure (broker down) must not stick: the next call tries again.
      info.catch(() => this.known.delete(logical));
    }
    return info;
  }

  async endOffsets(info: TopicInfo): Promise<PartitionOffsets[]> {
    const offsets = await fetchTopicOffsets(this.admin, info.name, this.retry);
    return offsets
      .map((o) => ({ partition: o.partition, low: Number(o.low), high: Number(o.high) }))
      .sort((a, b) => a.partition - b.partition);
  }

  /**
   * Creates the topic unless it exists. Processes started together race to create it, and the
   * loser may see a topic whose metadata has not reached the broker's cache yet (no partitions,
   * unknown topic): that settles within moments, so it is retried briefly before it is an error.
   */
  private async create(logical: string): Promise<TopicInfo> {
    const spec = this.layout.spec(logical);
    for (let attempt = 1; ; attempt++) {
      try {
        await this.admin.createTopics({
          waitForLeaders: true,
          topics: [
            {
              topic: spec.name,
              numPartitions: spec.partitions,
              configEntries: Object.entries(spec.configs).map(([name, value]) => ({ name, value })),
            },
          ],
        });
        const meta = await this.admin.fetchTopicMetadata({ topics: [spec.name] });
        const partitions = meta.topics[0]?.partitions.length ?? 0;
        if (partitions < 1) throw new Error(`topic ${spec.name} has no partitions in the metadata`);
        return { name: spec.name, partitions };
      } catch (e) {
        if (attempt >= CREATE_ATTEMPTS) throw kafkaError(e, `creating topic ${spec.name}`);
        await new Promise((r) => setTimeout(r, CREATE_BACKOFF_MS * attempt));
      }
    }
  }
}
