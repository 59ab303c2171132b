/**
 * A batch whose dependency did not answer (the schema registry, the runs topic), or whose takeover
 * or transaction failed, waits longer after each failure in a row (250 ms doubling to 15 s, with
 * jitter so workers do not retry in step), heartbeating so the worker stays in its group, and is
 * then fetched again (nothing of it was kept: batch-runs.ts).
 */
import type { EachBatchPayload } from 'kafkajs';
import type { LoopguardError } from '../domain/index.js';
import type { WorkerStats } from './worker-stats.js';

const BASE_MS = 250;
const MAX_MS = 15_000;

export class BatchBackoff {
  /** Failed attempts in a row at each partition's current batch. */
  private readonly attempts = new Map<number, number>();

  constructor(
    private readonly stats: WorkerStats,
    private readonly log: (line: string) => void,
  ) {}

  /**
   * Leaves the batch unresolved, so kafkajs fetches it again. Never thrown: kafkajs stops a
   * consumer for good on an error it does not mark retriable, and the process would run on
   * deciding nothing.
   */
  async wait(
    { batch, heartbeat, isRunning, isStale }: EachBatchPayload,
    e: LoopguardError,
    offset = batch.firstOffset() ?? '?',
  ): Promise<void> {
    const partition = batch.partition;
    const n = (this.attempts.get(partition) ?? 0) + 1;
    this.attempts.set(partition, n);
    // Jitter for identity of timing only (never for a decision): Math.random is enough.
    const ms = Math.round(Math.min(MAX_MS, BASE_MS * 2 ** (n - 1)) * (0.5 + Math.random() / 2));
    this.stats.dependencyRetried(e.code);
    this.log(
      `partition ${partition}: batch from offset ${offset} waits ${ms} ms and is decided again (attempt ${n}): ${e.code}: ${e.message}`,
    );
    const until = Date.now() + ms;
    while (Date.now() < until && isRunning() && !isStale()) {
      await new Promise((r) => setTimeout(r, Math.min(500, Math.max(0, until - Date.now()))));
      await heartbeat().catch(() => undefined);
    }
  }

  /** The partition's batch went through. */
  reset(partition: number): void {
    this.attempts.delete(partition);
  }
}
