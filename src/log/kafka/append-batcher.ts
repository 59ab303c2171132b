/**
 * Groups concurrent appends into one produce request: a guarded step waits for its ack, so a
 * request per append would cap throughput at one round trip per append. Sends are strictly one at
 * a time (the idempotent producer keeps order across retries only so), and the appends made while
 * one is in flight all go in the next; a lone append is sent at once unless a linger is set
 * (KafkaLogOptions.lingerMs). An append that resolved before another was called gets lower offsets.
 */
import type { LogRecord } from '../event-log.js';

export interface PendingAppend {
  readonly topic: string;
  readonly records: readonly LogRecord[];
}

/** Sends appends (in order) and resolves to each append's offsets, in the same order. */
export type SendAppends = (appends: readonly PendingAppend[]) => Promise<number[][]>;

export interface AppendBatcherOptions {
  /** How long the first append of a batch waits for company. */
  readonly lingerMs: number;
  /** A batch is sent at once when it reaches this many records (or bytes). */
  readonly maxBatchRecords: number;
  readonly maxBatchBytes: number;
}

interface Waiting extends PendingAppend {
  readonly bytes: number;
  resolve(offsets: number[]): void;
  reject(e: unknown): void;
}

/** A record's size on the wire, with Kafka's per-record and per-header overhead: what the batch cap counts. */
function wireBytes(r: LogRecord): number {
  let n = Buffer.byteLength(r.key) + r.value.length + 24;
  for (const [k, v] of Object.entries(r.headers ?? {})) n += Buffer.byteLength(k) + Buffer.byteLength(v) + 4;
  return n;
}

export class AppendBatcher {
  private queue: Waiting[] = [];
  private queuedRecords = 0;
  private queuedBytes = 0;
  private timer: NodeJS.Timeout | undefined;
  private draining: Promise<void> | undefined;

  constructor(
    private readonly send: SendAppends,
    private readonly opts: AppendBatcherOptions,
  ) {}

  append(topic: string, records: readonly LogRecord[]): Promise<number[]> {
    if (records.length === 0) return Promise.resolve([]);
    return new Promise<number[]>((resolve, reject) => {
      const bytes = records.reduce((n, r) => n + wireBytes(r), 0);
      this.queue.push({ topic, records, bytes, resolve, reject });
      this.queuedRecords += records.length;
      this.queuedBytes += bytes;
      this.schedule();
    });
  }

  /** Resolves once everything queued so far has been sent (or has failed). */
  async flush(): Promise<void> {
    while (this.queue.length > 0 || this.draining) {
      if (!this.draining) this.startDrain();
      await this.draining;
    }
  }

  private schedule(): void {
    if (this.draining) return; // the running drain picks the new append up when its send ends
    const full =
      this.queuedRecords >= this.opts.maxBatchRecords || this.queuedBytes >= this.opts.maxBatchBytes;
    if (full || this.opts.lingerMs <= 0) this.startDrain();
    else this.timer ??= setTimeout(() => this.startDrain(), this.opts.lingerMs);
  }

  private startDrain(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.draining) return;
    this.draining = this.drain().finally(() => {
      this.draining = undefined;
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.takeBatch();
      try {
        const offsets = await this.send(batch);
        for (const [i, w] of batch.entries()) w.resolve(offsets[i] ?? []);
      } catch (e) {
        for (const w of batch) w.reject(e);
      }
    }
  }

  /** Whole appends, oldest first, up to the limits; always at least one so a big append goes alone. */
  private takeBatch(): Waiting[] {
    let records = 0;
    let bytes = 0;
    let n = 0;
    for (const w of this.queue) {
      if (
        n > 0 &&
        (records + w.records.length > this.opts.maxBatchRecords || bytes + w.bytes > this.opts.maxBatchBytes)
      )
        break;
      records += w.records.length;
      bytes += w.bytes;
      n++;
    }
    const batch = this.queue.splice(0, n);
    this.queuedRecords -= records;
    this.queuedBytes -= bytes;
    return batch;
  }
}
