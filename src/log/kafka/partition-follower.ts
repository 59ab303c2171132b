/**
 * Keeps a fold of every partition of a topic up to date with one long-lived follow per partition,
 * so a writer waits only for its own record to come round (the ledger's claims, the runs topic's
 * append checks, the snapshot positions). A follow that fails (broker restart) is restarted from
 * the next unfolded offset; meanwhile waiters wait, and their callers' timeouts say "unavailable".
 */
import type { Kafka, KafkaMessage } from 'kafkajs';
import { IllegalStateError } from '../../domain/errors.js';
import { headersToStrings, waitAtMost } from './kafka-error.js';
import { followPartition } from './partition-reader.js';

export interface FollowedMessage {
  readonly partition: number;
  readonly offset: number;
  readonly key: string;
  readonly value: Buffer;
  readonly headers: Readonly<Record<string, string>>;
}

interface Waiter {
  readonly partition: number;
  readonly offset: number;
  readonly resolve: () => void;
  readonly reject: (e: unknown) => void;
}

const RESTART_DELAY_MS = 250;
/**
 * A waiter that sees no progress this long, from a follow whose consumer has been in its group at
 * least this long, restarts the follow. A follow still joining is never restarted for being slow:
 * restarting would only start the same join again (kafkajs bounds a join itself: one that fails
 * crashes, and that fails the follow, which is then restarted).
 */
const STALL_MS = 5_000;
const CLOSE_WAIT_MS = 5_000;

export class PartitionFollower {
  private readonly next: number[];
  private waiters: Waiter[] = [];
  private readonly stop = new AbortController();
  private readonly loops: Promise<void>[];
  private readonly current: AbortController[];
  /** When the current follow of each partition joined its group; undefined while it joins. */
  private readonly joinedAt: (number | undefined)[];

  constructor(
    private readonly kafka: Kafka,
    private readonly topic: string,
    partitions: number,
    private readonly onMessage: (m: FollowedMessage) => Promise<void> | void,
  ) {
    this.next = Array.from({ length: partitions }, () => 0);
    this.current = this.next.map(() => new AbortController());
    this.joinedAt = this.next.map(() => undefined);
    this.loops = this.next.map((_, p) => this.loop(p));
  }

  /**
   * The next offset of `partition` to fold: every record below it has been folded, and (with a
   * synchronous handler) every record handed to the handler is below it.
   */
  position(partition: number): number {
    return this.next[partition] ?? 0;
  }

  /**
   * Resolves once every record of `partition` below `offset` (exclusive) has been folded; rejects
   * with `log_closed` if the follower is closed first (the fold will never get there).
   */
  async foldedTo(partition: number, offset: number): Promise<void> {
    let lastProgress = performance.now();
    let before = this.next[partition] ?? 0;
    while ((this.next[partition] ?? 0) < offset) {
      if (this.stop.signal.aborted) throw this.closed(partition, offset);
      let timer: NodeJS.Timeout | undefined;
      const reached = new Promise<boolean>((resolve, reject) => {
        this.waiters.push({ partition, offset, resolve: () => resolve(true), reject });
        timer = setTimeout(() => resolve(false), STALL_MS);
      });
      try {
        await reached;
      } finally {
        clearTimeout(timer);
      }
      const now = performance.now();
      if ((this.next[partition] ?? 0) !== before) {
        before = this.next[partition] ?? 0;
        lastProgress = now;
        continue;
      }
      // kafkajs may leave a consumer that is in its group fetching nothing (seen after a broker
      // restart); a follow that has been in its group a while and has not moved while a record is
      // known to be there is restarted.
      const joined = this.joinedAt[partition];
      if (joined !== undefined && now - joined >= STALL_MS && now - lastProgress >= STALL_MS) {
        lastProgress = now;
        this.current[partition]?.abort();
      }
    }
  }

  /**
   * Stops every follow and waits (a bounded time) for its consumer to leave, a joining one once it
   * has joined (see partition-reader.ts); waiters fail with `log_closed`.
   */
  async close(): Promise<void> {
    this.stop.abort();
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w.reject(this.closed(w.partition, w.offset));
    // A consumer that crashed during a broker restart can hang in disconnect; closing the ledger
    // must not hang with it.
    await waitAtMost(Promise.allSettled(this.loops), CLOSE_WAIT_MS);
  }

  private closed(partition: number, offset: number): IllegalStateError {
    return new IllegalStateError(
      'log_closed',
      `${this.topic}: the follower was closed before it folded partition ${partition} up to offset ${offset}`,
      { details: { topic: this.topic, partition, offset } },
    );
  }

  private async loop(partition: number): Promise<void> {
    while (!this.stop.signal.aborted) {
      const ctl = new AbortController();
      this.current[partition] = ctl;
      this.joinedAt[partition] = undefined;
      try {
        await followPartition(
          this.kafka,
          this.topic,
          partition,
          this.next[partition] ?? 0,
          (m) => this.take(partition, m.offset, m.message),
          AbortSignal.any([this.stop.signal, ctl.signal]),
          {
            onPassed: (next) => this.passed(partition, next),
            onJoined: () => {
              if (this.current[partition] === ctl) this.joinedAt[partition] = performance.now();
            },
          },
        );
      } catch {
        // The broker went away or the consumer crashed; the fold keeps its place and picks up
        // where it stopped.
        if (!this.stop.signal.aborted) await new Promise((r) => setTimeout(r, RESTART_DELAY_MS));
      }
    }
  }

  private async take(partition: number, offset: number, message: KafkaMessage): Promise<void> {
    if (offset < (this.next[partition] ?? 0)) return;
    const handled = this.onMessage({
      partition,
      offset,
      key: message.key?.toString() ?? '',
      value: message.value ?? Buffer.alloc(0),
      headers: headersToStrings(message.headers) ?? {},
    });
    // A synchronous handler's record is passed before anything else runs: position() and what
    // the handler folded never disagree, even by a microtask.
    if (handled !== undefined) await handled;
    this.passed(partition, offset + 1);
  }

  /** Every offset of `partition` below `next` is folded (or is no record: a transaction marker). */
  private passed(partition: number, next: number): void {
    if (next <= (this.next[partition] ?? 0)) return;
    this.next[partition] = next;
    const ready = this.waiters.filter((w) => w.partition === partition && w.offset <= next);
    if (ready.length === 0) return;
    this.waiters = this.waiters.filter((w) => !ready.includes(w));
    for (const w of ready) w.resolve();
  }
}
