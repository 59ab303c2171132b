/**
 * How a logical topic of the EventLog port becomes a Kafka topic: its physical name (a prefix or
 * suffix lets tests and tenants share a cluster), its partition count and its configs. The runs,
 * stops and dlq topics are the system of record, so they keep records forever (a time-based
 * default would drop history after a week); the ledger is compacted (the latest per key matters).
 */
import { TOPICS } from '../event-log.js';

export interface TopicSpec {
  readonly name: string;
  readonly partitions: number;
  readonly configs: Readonly<Record<string, string>>;
}

export interface TopicLayoutOptions {
  /** Physical name = prefix + logical name + suffix. */
  readonly topicPrefix?: string;
  readonly topicSuffix?: string;
  /**
   * Partition count per logical topic, used only when the adapter creates the topic. Default:
   * DEFAULT_PARTITIONS for `runs`, 1 elsewhere; `runs` and `ledger` may be set to any count (see
   * KafkaLog on what more than one does to offsets).
   */
  readonly partitions?: Readonly<Record<string, number>>;
  /** Extra or overriding topic configs per logical topic. */
  readonly topicConfigs?: Readonly<Record<string, Readonly<Record<string, string>>>>;
}

const KEEP_FOREVER = { 'cleanup.policy': 'delete', 'retention.ms': '-1' } as const;

export const DEFAULT_TOPIC_CONFIGS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  [TOPICS.runs]: KEEP_FOREVER,
  [TOPICS.stops]: KEEP_FOREVER,
  // A claim must outlive compaction while its call is in flight (a completion or release may
  // follow much later); a week is far above any lease, and compaction still bounds the topic.
  [TOPICS.ledger]: { 'cleanup.policy': 'compact', 'min.compaction.lag.ms': String(7 * 24 * 3_600_000) },
  [TOPICS.dlq]: KEEP_FOREVER,
  // Only the newest snapshot of a run matters, and any of them can be rebuilt from runs.
  [TOPICS.snapshots]: { 'cleanup.policy': 'compact' },
};

/**
 * The runs topic is partitioned by run id from the start: partitions bound how many guard workers
 * share the load and how much a run's read scans, and repartitioning later would move runs.
 */
export const DEFAULT_PARTITIONS: Readonly<Record<string, number>> = { [TOPICS.runs]: 4 };

/** Topics whose offsets must stay one global sequence; more partitions there are refused. */
const SINGLE_PARTITION: ReadonlySet<string> = new Set([TOPICS.stops, TOPICS.dlq, TOPICS.snapshots]);

export class TopicLayout {
  constructor(private readonly opts: TopicLayoutOptions = {}) {
    for (const [topic, n] of Object.entries(opts.partitions ?? {})) {
      if (!Number.isInteger(n) || n < 1)
        throw new RangeError(`partitions of ${topic} must be >= 1, got ${n}`);
      if (n > 1 && SINGLE_PARTITION.has(topic)) {
        throw new RangeError(`${topic} must have exactly 1 partition (its offsets are global), got ${n}`);
      }
    }
  }

  physicalName(logical: string): string {
    return `${this.opts.topicPrefix ?? ''}${logical}${this.opts.topicSuffix ?? ''}`;
  }

  spec(logical: string): TopicSpec {
    return {
      name: this.physicalName(logical),
      partitions: this.opts.partitions?.[logical] ?? DEFAULT_PARTITIONS[logical] ?? 1,
      configs: { ...(DEFAULT_TOPIC_CONFIGS[logical] ?? {}), ...(this.opts.topicConfigs?.[logical] ?? {}) },
    };
  }
}
