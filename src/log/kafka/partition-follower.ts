/**
 * Keeps a fold of every partition of a topic up to date with one long-lived follow per partition,
 * so a writer waits only for its own record to come round instead of re-reading the topic: the
 * ledger's claims, the runs topic's append checks, the snapshot positions. A follow that fails
 * (broker restart) is restarted from the next unfolded offset; until then waiters simply wait,
 * and their callers' timeouts turn that into "unavailable".
 */
import type { Kafka } from 'kafkajs';
import { headersToStrings } from './kafka-error.js';
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
}

const RESTART_DELAY_MS = 250;
/** A waiter that sees no progress this long restarts its partition's follow. */
const STALL_MS = 2_000;
const CLOSE_WAIT_MS = 5_000;

export class PartitionFollower {
  private readonly next: number[];
  private waiters: Waiter[] = [];
  private readonly stop = new AbortController();
  private readonly loops: Promise<void>[];
  private readonly current: AbortController[];

  constructor(
    private readonly kafka: Kafka,
    private readonly topic: string,
    partitions: number,
    private readonly onMessage: (m: FollowedMessage) => Promise<void> | void,
  ) {
    this.next = Array.from({ length: partitions }, () => 0);
    this.current = this.next.map(() => new AbortController());
    this.loops = this.next.map((_, p) => this.loop(p));
  }

  /** Resolves once every record of `partition` below `offset` (exclusive) has been folded. */
  async foldedTo(partition: number, offset: number): Promise<void> {
    while ((this.next[partition] ?? 0) < offset && !this.stop.signal.aborted) {
      const before = this.next[partition] ?? 0;
      let timer: NodeJS.Timeout | undefined;
      const reached = new Promise<boolean>((resolve) => {
        this.waiters.push({ partition, offset, resolve: () => resolve(true) });
        timer = setTimeout(() => resolve(false), STALL_MS);
      });
      const ok = await reached;
      clearTimeout(timer);
      // kafkajs may leave a consumer crashed after a broker restart without failing the follow;
      // a follow that has not moved while a record is known to be there is restarted.
      if (!ok && (this.next[partition] ?? 0) === before) this.current[partition]?.abort();
    }
  }

  async close(): Promise<void> {
    this.stop.abort();
    // A consumer that crashed during a broker restart can hang in disconnect; closing the ledger
    // must not hang with it.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled(this.loops),
      new Promise((resolve) => {
        timer = setTimeout(resolve, CLOSE_WAIT_MS);
      }),
    ]);
    clearTimeout(timer);
  }

  private async loop(partition: number): Promise<void> {
    while (!this.stop.signal.aborted) {
      const ctl = new AbortController();
      this.current[partition] = ctl;
      try {
        await followPartition(
          this.kafka,
          this.topic,
          partition,
          this.next[partition] ?? 0,
          (m) => this.take(partition, m.offset, m.message),
          AbortSignal.any([this.stop.signal, ctl.signal]),
          (next) => this.passed(partition, next),
        );
      } catch {
        // The broker went away; the fold keeps its place and picks up where it stopped.
        await new Promise((r) => setTimeout(r, RESTART_DELAY_MS));
      }
    }
  }

  private async take(
    partition: number,
    offset: number,
    message: Parameters<Parameters<typeof followPartition>[4]>[0]['message'],
  ): Promise<void> {
    if (offset < (this.next[partition] ?? 0)) return;
    await this.onMessage({
      partition,
      offset,
      key: message.key?.toString() ?? '',
      value: message.value ?? Buffer.alloc(0),
      headers: headersToStrings(message.headers) ?? {},
    });
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
