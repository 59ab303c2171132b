/**
 * Reading by offset with kafkajs, which has no standalone fetch API: every read or follow gets
 * its own consumer in a throwaway group (never committed) and seeks. Positions are tracked here:
 * a fetch that raced the seek, or a restarted consumer, may hand us records again, and `next`
 * drops those (`offset >= next`, not `=== next`: a compacted topic has gaps).
 */
import { randomUUID } from 'node:crypto';
import type { Consumer, ConsumerRunConfig, Kafka, KafkaMessage } from 'kafkajs';
import { LoopguardError } from '../../domain/errors.js';
import { kafkaError, withTimeout } from './kafka-error.js';
import { type KafkaRetryPolicy, retryWithin, withKafkaRetry } from './kafka-retry.js';

export interface OffsetRange {
  readonly partition: number;
  readonly from: number;
  /** Exclusive: stop before this offset. */
  readonly to: number;
}

export interface PartitionMessage {
  readonly partition: number;
  readonly offset: number;
  readonly message: KafkaMessage;
}

/** Short fetch waits: a read stops as soon as it has its range, a follow notices abort quickly. */
const FETCH_WAIT_MS = 100;

async function throwawayConsumer(kafka: Kafka, topic: string): Promise<Consumer> {
  const consumer = kafka.consumer({
    groupId: `loopguard-reader-${randomUUID()}`,
    maxWaitTimeInMs: FETCH_WAIT_MS,
    allowAutoTopicCreation: false,
    // kafkajs restarts a crashed consumer with a fresh group state (its pause and seek lost), and a
    // restart after our disconnect starts a consumer nobody stops. A crash fails the read or follow
    // instead (see `started`), and its caller starts a new consumer from where it stopped.
    retry: { retries: 5, restartOnFailure: async () => false },
  });
  try {
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
  } catch (e) {
    // A consumer that connected and then failed to subscribe holds its sockets open for good.
    await consumer.disconnect().catch(() => undefined);
    throw e;
  }
  return consumer;
}

/**
 * Runs the consumer; settles once kafkajs has joined the group and started fetching, or has
 * handled a failed start. A crash (now or later) is handed to `onCrash`.
 */
function started(c: Consumer, config: ConsumerRunConfig, onCrash: (e: unknown) => void): Promise<void> {
  c.on(c.events.CRASH, ({ payload }) => onCrash(payload.error));
  const run = c.run(config);
  run.catch(onCrash);
  return run;
}

/**
 * Disconnects a consumer only after its `run()` has settled: kafkajs's disconnect while run() is
 * still joining stops nothing, and once the join completes the consumer fetches for good (the
 * process never exits). The wait is bounded by kafkajs's own join retries.
 */
async function release(c: Consumer | undefined, run: Promise<void> | undefined): Promise<void> {
  await run?.catch(() => undefined);
  await c?.disconnect().catch(() => undefined);
}

/** A failure of the caller's handler: handed back as it is, never retried. */
class HandlerFailure {
  constructor(readonly error: unknown) {}
}

/**
 * The throwaway group's one member is assigned every partition of the topic, and would fetch
 * (and decode) all of them from the beginning: only the partitions read are fetched.
 */
function onlyPartitions(c: Consumer, topic: string, partitions: number[]): void {
  c.pause([{ topic }]);
  c.resume([{ topic, partitions }]);
}

/**
 * Reads every range (in offset order per partition; from >= to: skipped) and stops. With
 * onMessage, each record is handed over as it arrives instead of collected (the result is empty).
 * A retriable failure is retried under the adapter's policy with a new consumer that resumes where
 * the last one stopped, so no record is handed over twice.
 */
export async function readRanges(
  kafka: Kafka,
  topic: string,
  ranges: readonly OffsetRange[],
  timeoutMs: number,
  onMessage?: (m: PartitionMessage) => Promise<void> | void,
  policy: KafkaRetryPolicy = retryWithin(timeoutMs),
): Promise<PartitionMessage[]> {
  const open = new Map<number, { next: number; to: number }>();
  for (const r of ranges) if (r.from < r.to) open.set(r.partition, { next: r.from, to: r.to });
  if (open.size === 0) return [];
  const out: PartitionMessage[] = [];
  try {
    await withKafkaRetry(`reading ${topic}`, () => readOpen(kafka, topic, open, out, timeoutMs, onMessage), {
      policy,
    });
  } catch (e) {
    const cause = e instanceof LoopguardError ? e.cause : undefined;
    if (cause instanceof HandlerFailure) throw cause.error;
    throw e;
  }
  return out.sort((a, b) => a.partition - b.partition || a.offset - b.offset);
}

/** One attempt: reads what is still open, advancing each partition's `next` as records pass. */
async function readOpen(
  kafka: Kafka,
  topic: string,
  open: Map<number, { next: number; to: number }>,
  out: PartitionMessage[],
  timeoutMs: number,
  onMessage?: (m: PartitionMessage) => Promise<void> | void,
): Promise<void> {
  if (open.size === 0) return;
  let consumer: Consumer | undefined;
  let run: Promise<void> | undefined;
  try {
    consumer = await throwawayConsumer(kafka, topic);
    const c = consumer;
    const done = new Promise<void>((resolve, reject) => {
      // A fetch of transaction markers and aborted records only (the end of a topic written in
      // transactions) never reaches eachBatch; kafkajs reports it here, with its last offset.
      c.on(c.events.END_BATCH_PROCESS, ({ payload }) => {
        const pos = open.get(payload.partition);
        if (pos === undefined || payload.batchSize !== 0 || Number(payload.lastOffset) < pos.to - 1) return;
        open.delete(payload.partition);
        if (open.size === 0) resolve();
      });
      run = started(
        c,
        {
          autoCommit: false,
          eachBatch: async ({ batch }) => {
            const pos = open.get(batch.partition);
            if (!pos) return;
            for (const message of batch.messages) {
              const offset = Number(message.offset);
              if (offset < pos.next) continue;
              if (offset >= pos.to) break;
              if (onMessage) {
                // A failing handler ends the read; thrown from eachBatch it would make kafkajs retry
                // the batch until the timeout.
                try {
                  // Awaited only when the handler is async: a microtask per record is most of a rebuild's overhead.
                  const pending = onMessage({ partition: batch.partition, offset, message });
                  if (pending !== undefined) await pending;
                } catch (e) {
                  open.clear();
                  reject(new HandlerFailure(e));
                  return;
                }
              } else out.push({ partition: batch.partition, offset, message });
              pos.next = offset + 1;
            }
            if (pos.next >= pos.to || Number(batch.lastOffset()) >= pos.to - 1) open.delete(batch.partition);
            if (open.size === 0) resolve();
          },
        },
        reject,
      );
    });
    onlyPartitions(c, topic, [...open.keys()]);
    for (const [partition, pos] of open) c.seek({ topic, partition, offset: String(pos.next) });
    await withTimeout(done, timeoutMs, `reading ${topic}`);
  } catch (e) {
    if (e instanceof HandlerFailure) throw new LoopguardError('read_handler_failed', 'handler', { cause: e });
    throw e;
  } finally {
    await release(consumer, run);
  }
}

/** What a follow tells its owner besides the records. */
export interface FollowHooks {
  /**
   * The follow has passed every offset below `next`, records or not: a transactional topic ends
   * in commit markers, which no consumer sees as records, so a waiter for the partition's end
   * would wait forever on the records alone.
   */
  readonly onPassed?: (next: number) => void;
  /** The follow's consumer has joined its group and is fetching (a slow join is not a stall). */
  readonly onJoined?: () => void;
}

/**
 * Hands every record of one partition from `from` on to `onMessage`, one at a time, until the
 * signal aborts (resolves), `onMessage` throws (rejects with that error) or the consumer crashes
 * (rejects with a LoopguardError). No record is handed over after the returned promise settles,
 * and no consumer of it is left running.
 */
export async function followPartition(
  kafka: Kafka,
  topic: string,
  partition: number,
  from: number,
  onMessage: (m: PartitionMessage) => Promise<void> | void,
  signal: AbortSignal,
  hooks: FollowHooks = {},
): Promise<void> {
  if (signal.aborted) return;
  let next = from;
  let stopped = false;
  let consumer: Consumer | undefined;
  let run: Promise<void> | undefined;
  let onAbort: (() => void) | undefined;
  try {
    consumer = await throwawayConsumer(kafka, topic).catch((e: unknown) => {
      throw kafkaError(e, `following ${topic}`);
    });
    // An abort while the consumer was joining fired before anyone listened: without this check
    // the follow would run on, and its consumer would keep the process alive after close.
    if (signal.aborted) return;
    const c = consumer;
    const finished = new Promise<void>((resolve, reject) => {
      const stop = (failure?: { error: unknown }): void => {
        stopped = true;
        if (failure) reject(failure.error);
        else resolve();
      };
      onAbort = () => stop();
      signal.addEventListener('abort', onAbort, { once: true });
      const passed = (last: number): void => {
        if (stopped || last + 1 <= next) return;
        next = last + 1;
        hooks.onPassed?.(next);
      };
      c.on(c.events.GROUP_JOIN, () => {
        if (!stopped) hooks.onJoined?.();
      });
      // A fetch of markers and aborted records only never reaches eachBatch (firstOffset null
      // would mean nothing at or after the fetched offset at all: then nothing is passed).
      c.on(c.events.END_BATCH_PROCESS, ({ payload }) => {
        if (payload.partition === partition && payload.batchSize === 0 && payload.firstOffset !== null)
          passed(Number(payload.lastOffset));
      });
      run = started(
        c,
        {
          autoCommit: false,
          eachBatch: async ({ batch, heartbeat, isRunning }) => {
            if (batch.partition !== partition) return;
            for (const message of batch.messages) {
              if (stopped || !isRunning()) return;
              const offset = Number(message.offset);
              if (offset < next) continue;
              try {
                await onMessage({ partition, offset, message });
              } catch (e) {
                stop({ error: e });
                return;
              }
              next = offset + 1;
              await heartbeat();
            }
            // Every record handed over: the markers after the last one are passed too.
            passed(Number(batch.lastOffset()));
          },
        },
        (e) => stop({ error: kafkaError(e, `following ${topic}`) }),
      );
    });
    onlyPartitions(c, topic, [partition]);
    c.seek({ topic, partition, offset: String(from) });
    await finished;
  } finally {
    if (onAbort) signal.removeEventListener('abort', onAbort);
    await release(consumer, run);
  }
}
