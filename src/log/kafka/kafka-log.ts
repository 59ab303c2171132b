/**
 * EventLog on Kafka (kafkajs).
 *
 * The port's offset is one number per topic; Kafka's is per partition. read, follow and endOffset
 * work on 1-partition topics only (`stops`, `dlq`), where the two are the same. `runs` has
 * DEFAULT_PARTITIONS and `ledger` may have more than one (keyed by run id / operation key, so one
 * partition owns a run): there `append` returns per-partition offsets, read/follow/endOffset
 * refuse with `partitioned_topic`, and readers use `readKey`, `scan` or a consumer group.
 *
 * Durability: one idempotent producer (acks=-1, one request in flight); `append` resolves after
 * the broker acked. Appends made while a request is in flight share the next one (append-batcher.ts).
 */
import {
  type Admin,
  type Consumer,
  type ConsumerConfig,
  Kafka,
  logLevel,
  type Message,
  Partitioners,
  type PartitionMetadata,
  type Producer,
} from 'kafkajs';
import { LoopguardError } from '../../domain/errors.js';
import type { RunStream } from '../../ports/run-stream.js';
import type { LogRecord, StoredRecord } from '../event-log.js';
import type { EventStore } from '../event-store.js';
import { checkRead, checkTopic, closedError } from '../log-errors.js';
import { type RunLog, storeOn } from '../run-log.js';
import { AppendBatcher, type PendingAppend } from './append-batcher.js';
import { headersToStrings, kafkaError, withTimeout } from './kafka-error.js';
import { type KafkaRetryPolicy, retryWithin } from './kafka-retry.js';
import { KafkaRunStream } from './kafka-run-stream.js';
import { fixKafkajsRequestQueue } from './kafkajs-request-queue.js';
import { followPartition, type OffsetRange, type PartitionMessage, readRanges } from './partition-reader.js';
import { TopicLayout, type TopicLayoutOptions } from './topic-layout.js';
import { type PartitionOffsets, type TopicInfo, TopicRegistry } from './topic-registry.js';

export interface KafkaLogOptions extends TopicLayoutOptions {
  readonly brokers: readonly string[];
  readonly clientId?: string;
  /** kafkajs log level; NOTHING by default: every real failure reaches the caller anyway. */
  readonly logLevel?: logLevel;
  /** How long an append that finds no request in flight waits for company. Default 0 (see append-batcher.ts). */
  readonly lingerMs?: number;
  readonly maxBatchRecords?: number;
  readonly maxBatchBytes?: number;
  /** Upper bound for one append's ack or one read. Default 30 s. */
  readonly requestTimeoutMs?: number;
  /** How reads and admin requests retry; by default KAFKA_RETRY, its deadline cut to requestTimeoutMs. */
  readonly retry?: KafkaRetryPolicy;
}

/** Every producer's settings: idempotent, one request in flight, murmur2 on the key (where readers look). */
export const PRODUCER_CONFIG = {
  idempotent: true,
  maxInFlightRequests: 1,
  allowAutoTopicCreation: false,
  createPartitioner: Partitioners.DefaultPartitioner,
} as const;

/** A record of a multi-partition topic: its offset is only meaningful with its partition. */
export interface PartitionedRecord extends StoredRecord {
  readonly partition: number;
}

/** A record read from a partition as the port's record; `only`: just these headers (see scan). */
export function partitionedRecord(
  topic: string,
  m: PartitionMessage,
  only?: readonly string[],
): PartitionedRecord {
  const headers = headersToStrings(m.message.headers, only);
  const value = m.message.value ?? Buffer.alloc(0);
  const key = m.message.key?.toString() ?? '';
  const { partition, offset } = m;
  return headers
    ? { topic, partition, offset, key, value, headers }
    : { topic, partition, offset, key, value };
}

export class KafkaLog implements RunLog {
  private readonly batcher: AppendBatcher;
  private readonly topics: TopicRegistry;
  private readonly partitioner = Partitioners.DefaultPartitioner();
  private readonly partitionMetadata = new Map<number, PartitionMetadata[]>();
  private readonly timeoutMs: number;
  private readonly retry: KafkaRetryPolicy;
  private readonly layout: TopicLayout;
  private closed = false;
  /** Aborts running follows on close, as the other adapters end theirs. */
  private readonly closing = new AbortController();

  private constructor(
    readonly kafka: Kafka,
    private readonly producer: Producer,
    private readonly admin: Admin,
    layout: TopicLayout,
    opts: KafkaLogOptions,
  ) {
    this.layout = layout;
    this.timeoutMs = opts.requestTimeoutMs ?? 30_000;
    // A read retried past the log's own request timeout would outwait what its caller allows.
    this.retry = opts.retry ?? retryWithin(this.timeoutMs);
    this.topics = new TopicRegistry(admin, layout, this.retry);
    this.batcher = new AppendBatcher((appends) => this.send(appends), {
      lingerMs: opts.lingerMs ?? 0,
      maxBatchRecords: opts.maxBatchRecords ?? 10_000,
      // The broker refuses a record batch above message.max.bytes (about 1 MiB by default).
      maxBatchBytes: opts.maxBatchBytes ?? 512 * 1024,
    });
  }

  static async connect(opts: KafkaLogOptions): Promise<KafkaLog> {
    const layout = new TopicLayout(opts); // validates partitions before any connection
    fixKafkajsRequestQueue();
    const kafka = new Kafka({
      clientId: opts.clientId ?? 'loopguard',
      brokers: [...opts.brokers],
      logLevel: opts.logLevel ?? logLevel.NOTHING,
    });
    const producer = kafka.producer(PRODUCER_CONFIG);
    const admin = kafka.admin();
    try {
      await Promise.all([producer.connect(), admin.connect()]);
    } catch (e) {
      await Promise.allSettled([producer.disconnect(), admin.disconnect()]);
      throw kafkaError(e, `connecting to ${opts.brokers.join(',')}`);
    }
    return new KafkaLog(kafka, producer, admin, layout, opts);
  }

  /** Creates the topic if needed; its physical name and partition count. */
  prepare(topic: string): Promise<TopicInfo> {
    checkTopic(topic);
    this.assertOpen();
    return this.topics.ensure(topic);
  }

  /** The Kafka topic a logical topic maps to (prefix/suffix applied), e.g. for its registry subject. */
  physicalName(topic: string): string {
    return this.layout.physicalName(topic);
  }

  /** A kafkajs consumer on this log's connection, for consumer-group readers. */
  consumer(config: ConsumerConfig): Consumer {
    return this.kafka.consumer({ allowAutoTopicCreation: false, ...config });
  }

  async append(topic: string, records: readonly LogRecord[]): Promise<number[]> {
    await this.prepare(topic);
    this.assertOpen(); // close() may have flushed while the topic was being created
    return this.batcher.append(topic, records);
  }

  async read(topic: string, fromOffset: number, maxRecords?: number): Promise<StoredRecord[]> {
    checkRead(topic, fromOffset, maxRecords);
    const info = await this.singlePartition(topic, 'read');
    const end = await this.topics.endOffsets(info).then((o) => o[0]?.high ?? 0);
    const to = maxRecords === undefined ? end : Math.min(end, fromOffset + maxRecords);
    const got = await this.readRanges(info.name, [{ partition: 0, from: fromOffset, to }]);
    return got.map((m) => this.stored(topic, m));
  }

  /** Every record of every partition up to the current end, partition by partition. */
  async readAll(topic: string): Promise<PartitionedRecord[]> {
    const { name, ranges } = await this.wholeTopic(topic);
    const got = await this.readRanges(name, ranges);
    return got.map((m) => partitionedRecord(topic, m));
  }

  /**
   * Hands every record of every partition, up to the end at the time of the call, to onRecord (in
   * offset order within a partition) without holding them in memory: the rebuild path. `headers`:
   * only these headers are converted (for every record, the others would cost as much as the rest).
   */
  async scan(
    topic: string,
    onRecord: (r: PartitionedRecord) => Promise<void> | void,
    opts: { readonly timeoutMs?: number; readonly headers?: readonly string[] } = {},
  ): Promise<number> {
    const { name, ranges } = await this.wholeTopic(topic);
    let n = 0;
    await this.readRanges(
      name,
      ranges,
      (m) => {
        n++;
        return onRecord(partitionedRecord(topic, m, opts.headers));
      },
      opts.timeoutMs ?? 10 * 60_000,
    );
    return n;
  }

  /** The Kafka name of `topic` and every partition's range up to its end now: what readAll and scan read. */
  private async wholeTopic(topic: string): Promise<{ name: string; ranges: OffsetRange[] }> {
    const info = await this.prepare(topic);
    const ends = await this.topics.endOffsets(info);
    return {
      name: info.name,
      ranges: ends.map((o) => ({ partition: o.partition, from: o.low, to: o.high })),
    };
  }

  /** First and next offsets of every partition of `topic`. */
  async partitionEnds(topic: string): Promise<PartitionOffsets[]> {
    return this.topics.endOffsets(await this.prepare(topic));
  }

  /** The partition of `topic` that owns `key` (where `append` puts its records). */
  async partitionOfKey(topic: string, key: string): Promise<number> {
    return this.partitionOf(await this.prepare(topic), key);
  }

  /** Every record keyed `key`, in offset order, from its own partition: up to its end now, or in [from, to). */
  async readKey(topic: string, key: string, range?: { from: number; to: number }): Promise<StoredRecord[]> {
    const info = await this.prepare(topic);
    const partition = this.partitionOf(info, key);
    const ends = (await this.topics.endOffsets(info)).find((o) => o.partition === partition);
    const from = Math.max(range?.from ?? 0, ends?.low ?? 0);
    const to = Math.min(range?.to ?? Number.POSITIVE_INFINITY, ends?.high ?? 0);
    if (from >= to) return [];
    const out: StoredRecord[] = [];
    await this.readRanges(info.name, [{ partition, from, to }], (m) => {
      if (m.message.key?.toString() === key) out.push(this.stored(topic, m));
    });
    return out;
  }

  async follow(
    topic: string,
    fromOffset: number,
    onRecord: (r: StoredRecord) => Promise<void> | void,
    signal: AbortSignal,
  ): Promise<void> {
    checkRead(topic, fromOffset, undefined);
    const info = await this.singlePartition(topic, 'follow');
    const until = AbortSignal.any([signal, this.closing.signal]);
    await followPartition(
      this.kafka,
      info.name,
      0,
      fromOffset,
      (m) => onRecord(this.stored(topic, m)),
      until,
    );
  }

  async endOffset(topic: string): Promise<number> {
    const info = await this.singlePartition(topic, 'endOffset');
    return (await this.topics.endOffsets(info))[0]?.high ?? 0;
  }

  /** Records a full read of the topic would see now, over every partition: a progress bar's total. */
  async recordCount(topic: string): Promise<number> {
    checkTopic(topic);
    const info = await this.topics.ensure(topic);
    return (await this.topics.endOffsets(info)).reduce((n, o) => n + o.high - o.low, 0);
  }

  /** The store port on this log: the batch rule in its reads stands in for a conditional append. */
  runStream(events: EventStore): RunStream {
    return new KafkaRunStream(storeOn(this, events), this);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.closing.abort();
    await this.batcher.flush();
    await Promise.allSettled([this.producer.disconnect(), this.admin.disconnect()]);
  }

  private async send(appends: readonly PendingAppend[]): Promise<number[][]> {
    // Partitions are chosen here, not by kafkajs, so each record's offset can be computed from
    // its partition's baseOffset and its position among that partition's records in the request.
    const byTopic = new Map<string, Message[]>();
    const slots: { slot: string; index: number }[][] = [];
    const counts = new Map<string, number>();
    for (const a of appends) {
      const info = await this.topics.ensure(a.topic);
      const messages = byTopic.get(info.name) ?? [];
      byTopic.set(info.name, messages);
      slots.push(
        a.records.map((r) => {
          const partition = this.partitionOf(info, r.key);
          messages.push({ key: r.key, value: r.value, headers: r.headers, partition });
          const slot = `${info.name}/${partition}`;
          const index = counts.get(slot) ?? 0;
          counts.set(slot, index + 1);
          return { slot, index };
        }),
      );
    }
    const topicMessages = [...byTopic].map(([topic, messages]) => ({ topic, messages }));
    const acks = await withTimeout(
      this.producer.sendBatch({ topicMessages, acks: -1 }),
      this.timeoutMs,
      'append',
    ).catch((e: unknown) => {
      throw kafkaError(e, 'append');
    });
    const base = new Map(
      acks.map((a) => [`${a.topicName}/${a.partition}`, Number(a.baseOffset ?? a.offset)]),
    );
    return slots.map((s) =>
      s.map(({ slot, index }) => {
        const b = base.get(slot);
        if (b === undefined || Number.isNaN(b))
          throw new LoopguardError('kafka_protocol', `no ack for ${slot}`);
        return b + index;
      }),
    );
  }

  private readRanges(
    name: string,
    ranges: readonly OffsetRange[],
    onMessage?: (m: PartitionMessage) => Promise<void> | void,
    timeoutMs = this.timeoutMs,
  ): Promise<PartitionMessage[]> {
    return readRanges(this.kafka, name, ranges, timeoutMs, onMessage, this.retry);
  }

  private partitionOf(info: TopicInfo, key: string): number {
    if (info.partitions === 1) return 0;
    // Built once per partition count: this runs for every record appended.
    let partitionMetadata = this.partitionMetadata.get(info.partitions);
    if (partitionMetadata === undefined) {
      partitionMetadata = Array.from({ length: info.partitions }, (_, partitionId) => ({
        partitionId,
        leader: 0,
        replicas: [],
        isr: [],
        partitionErrorCode: 0,
      }));
      this.partitionMetadata.set(info.partitions, partitionMetadata);
    }
    return this.partitioner({ topic: info.name, partitionMetadata, message: { key, value: null } });
  }

  private async singlePartition(topic: string, op: string): Promise<TopicInfo> {
    const info = await this.prepare(topic);
    if (info.partitions !== 1) {
      throw new LoopguardError(
        'partitioned_topic',
        `${op}(${topic}): the topic has ${info.partitions} partitions, so one offset is ambiguous; use readAll or a consumer group`,
        { details: { topic, partitions: info.partitions } },
      );
    }
    return info;
  }

  /** As partitionedRecord, without the partition: a read of one partition or one key's. */
  private stored(topic: string, m: PartitionMessage): StoredRecord {
    const { partition: _, ...record } = partitionedRecord(topic, m);
    return record;
  }

  private assertOpen(): void {
    if (this.closed) throw closedError();
  }
}
