/**
 * A consumer-group reader that decodes every record and keeps going past the ones it cannot
 * decode. A poison record (wrong magic byte, unknown schema id, truncated body) must neither stop
 * a projection forever nor vanish: it goes to the dead-letter topic with its original bytes, the
 * reason and where it came from, and is counted.
 *
 * At-least-once: a record's offset is committed only after its handler returned or its dead letter
 * was durably appended, so handlers must be idempotent (projections are: they fold by offset/key).
 * A retriable LoopguardError (a registry briefly down) is no dead letter: it is rethrown, nothing
 * is committed, and kafkajs retries the batch.
 */
import type { Consumer } from 'kafkajs';
import { LoopguardError } from '../../domain/errors.js';
import { TOPICS } from '../event-log.js';
import { kafkaError, waitAtMost } from './kafka-error.js';
import { type KafkaLog, type PartitionedRecord, partitionedRecord } from './kafka-log.js';

export interface DecodingConsumerOptions<T> {
  /** Logical topic to consume, e.g. TOPICS.runs. */
  readonly topic: string;
  /** Consumer group; committed offsets belong to it. */
  readonly groupId: string;
  readonly decode: (value: Buffer) => Promise<T> | T;
  /**
   * Whether a record is one to handle at all, asked before it is decoded (every record, in
   * partition order); one that is not is passed over, neither handled nor dead-lettered.
   */
  readonly admit?: (record: PartitionedRecord) => Promise<boolean> | boolean;
  /** `heartbeat` keeps the group membership alive while a slow handler (a retrying delivery) works. */
  readonly handle: (
    event: T,
    record: PartitionedRecord,
    heartbeat: () => Promise<void>,
  ) => Promise<void> | void;
  /** Logical dead-letter topic; TOPICS.dlq by default. */
  readonly dlqTopic?: string;
  /** Where a group without committed offsets starts; the beginning by default (rebuilds). */
  readonly fromBeginning?: boolean;
  /** Told about every failure that made kafkajs retry or restart the consumer. */
  readonly onError?: (e: LoopguardError) => void;
  /**
   * Commit after every handled record rather than after each batch: for handlers with effects
   * outside Kafka (alerts), so a crash re-delivers at most the record in flight.
   */
  readonly commitEach?: boolean;
  /** How long the broker waits for a silent member before handing its partitions to another
   *  (kafkajs default 30 s); a restarted subscriber resumes only after that. */
  readonly sessionTimeoutMs?: number;
  /** Told, after each record, how many records of its partition are still to read (consumer lag). */
  readonly onLag?: (partition: number, lag: number) => void;
  /** Told each time the consumer has joined its group: the partitions it reads may have changed. */
  readonly onJoin?: () => void;
}

/** Header names of a dead letter. */
export const DLQ_HEADERS = {
  reason: 'reason',
  code: 'code',
  topic: 'origin.topic',
  partition: 'origin.partition',
  offset: 'origin.offset',
} as const;

/** Why a record that did not decode is a dead letter; undefined for a retriable failure (not one). */
export function deadLetterCause(e: unknown): { code: string; reason: string } | undefined {
  if (e instanceof LoopguardError) return e.retriable ? undefined : { code: e.code, reason: e.message };
  return { code: 'undecodable', reason: e instanceof Error ? e.message : String(e) };
}

/** A dead letter's headers: why, and where its record came from. */
export function deadLetterHeaders(
  { code, reason }: { code: string; reason: string },
  topic: string,
  partition: number,
  offset: number | string,
): Record<string, string> {
  return {
    [DLQ_HEADERS.reason]: reason,
    [DLQ_HEADERS.code]: code,
    [DLQ_HEADERS.topic]: topic,
    [DLQ_HEADERS.partition]: String(partition),
    [DLQ_HEADERS.offset]: String(offset),
  };
}

/** How long stop() waits for a (re)join in progress to settle; after that it finishes in the background. */
const STOP_WAIT_MS = 10_000;

export class DecodingConsumer<T> {
  private handledCount = 0;
  private deadLetterCount = 0;
  /**
   * Settles once kafkajs's restart after the last crash has joined the group or crashed again
   * (resolved while no restart is under way): a disconnect during that rejoin stops nothing, and
   * the consumer would fetch for good once the join completes, so stop() waits for this first.
   */
  private rejoined: Promise<void> = Promise.resolve();
  private endRejoin: () => void = () => undefined;
  private stopping: Promise<void> | undefined;

  private constructor(
    private readonly log: KafkaLog,
    private readonly consumer: Consumer,
    private readonly opts: DecodingConsumerOptions<T>,
  ) {}

  /** Joins the group and starts consuming in the background; stop() ends it. */
  static async start<T>(log: KafkaLog, opts: DecodingConsumerOptions<T>): Promise<DecodingConsumer<T>> {
    const source = await log.prepare(opts.topic);
    await log.prepare(opts.dlqTopic ?? TOPICS.dlq);
    const consumer = log.consumer({
      groupId: opts.groupId,
      maxWaitTimeInMs: 250,
      ...(opts.sessionTimeoutMs === undefined
        ? {}
        : {
            sessionTimeout: opts.sessionTimeoutMs,
            heartbeatInterval: Math.max(100, Math.floor(opts.sessionTimeoutMs / 3)),
          }),
    });
    const self = new DecodingConsumer(log, consumer, opts);
    try {
      await consumer.connect();
      await consumer.subscribe({ topics: [source.name], fromBeginning: opts.fromBeginning ?? true });
      consumer.on(consumer.events.CRASH, ({ payload }) => {
        opts.onError?.(kafkaError(payload.error, 'consuming'));
        self.crashed(payload.restart);
      });
      // kafkajs emits GROUP_JOIN before its runner counts as running (a few promise steps later);
      // a disconnect before that would skip the runner again, so the wait ends a macrotask later.
      consumer.on(consumer.events.GROUP_JOIN, () => {
        opts.onJoin?.();
        setImmediate(self.endRejoin);
      });
      await consumer.run({
        eachBatchAutoResolve: false,
        eachBatch: async ({
          batch,
          resolveOffset,
          heartbeat,
          commitOffsetsIfNecessary,
          isRunning,
          isStale,
          uncommittedOffsets,
        }) => {
          for (const message of batch.messages) {
            if (!isRunning() || isStale()) break;
            const offset = Number(message.offset);
            const record = partitionedRecord(opts.topic, { partition: batch.partition, offset, message });
            await self.process(record, heartbeat);
            resolveOffset(message.offset);
            opts.onLag?.(
              batch.partition,
              Math.max(0, Number(batch.highWatermark) - Number(message.offset) - 1),
            );
            if (opts.commitEach) await commitOffsetsIfNecessary(uncommittedOffsets());
            await heartbeat();
          }
          await commitOffsetsIfNecessary();
        },
      });
    } catch (e) {
      await consumer.disconnect().catch(() => undefined);
      throw kafkaError(e, `starting consumer of ${opts.topic}`);
    }
    return self;
  }

  /** Records decoded and handled so far (re-deliveries after a restart count again). */
  get handled(): number {
    return this.handledCount;
  }

  /** Records sent to the dead-letter topic so far. */
  get deadLettered(): number {
    return this.deadLetterCount;
  }

  /**
   * Leaves the group; offsets resolved so far are committed. A restart after a crash that is
   * still joining is let settle first (bounded by STOP_WAIT_MS; past that the disconnect follows
   * the join in the background), so no consumer of this one is left fetching.
   */
  async stop(): Promise<void> {
    this.stopping ??= this.rejoined.then(() => this.consumer.disconnect());
    await waitAtMost(this.stopping, STOP_WAIT_MS);
  }

  /**
   * kafkajs emits CRASH just before it sets its restart timer, in the same tick: a disconnect
   * that follows the settled wait (a microtask later) clears that timer, so a crash during the
   * wait ends it too.
   */
  private crashed(restart: boolean): void {
    this.endRejoin();
    if (!restart) return;
    this.rejoined = new Promise((resolve) => {
      this.endRejoin = resolve;
    });
  }

  private async process(record: PartitionedRecord, heartbeat: () => Promise<void>): Promise<void> {
    if (this.opts.admit !== undefined && !(await this.opts.admit(record))) return;
    let event: T;
    try {
      event = await this.opts.decode(record.value);
    } catch (e) {
      const cause = deadLetterCause(e);
      if (!cause) {
        this.opts.onError?.(e as LoopguardError);
        throw e;
      }
      const headers = deadLetterHeaders(cause, record.topic, record.partition, record.offset);
      await this.log.append(this.opts.dlqTopic ?? TOPICS.dlq, [
        { key: record.key, value: record.value, headers },
      ]);
      this.deadLetterCount++;
      return;
    }
    await this.opts.handle(event, record, heartbeat);
    this.handledCount++;
  }
}
