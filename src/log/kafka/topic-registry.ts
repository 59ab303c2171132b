/**
 * Creates topics on first use and remembers what they look like. Creating with explicit configs
 * (rather than relying on broker auto-creation) is what makes the ledger compacted and the runs
 * topic keep its history; an existing topic is taken as it is, with its own partition count.
 */
import type { Admin } from 'kafkajs';
import { kafkaError } from './kafka-error.js';
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

export class TopicRegistry {
  private readonly known = new Map<string, Promise<TopicInfo>>();

  constructor(
    private readonly admin: Admin,
    private readonly layout: TopicLayout,
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
    try {
      const offsets = await this.admin.fetchTopicOffsets(info.name);
      return offsets
        .map((o) => ({ partition: o.partition, low: Number(o.low), high: Number(o.high) }))
        .sort((a, b) => a.partition - b.partition);
    } catch (e) {
      throw kafkaError(e, `fetching offsets of ${info.name}`);
    }
  }

  private async create(logical: string): Promise<TopicInfo> {
    const spec = this.layout.spec(logical);
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
      throw kafkaError(e, `creating topic ${spec.name}`);
    }
  }
}
