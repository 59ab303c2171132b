/** In-memory EventLog for tests and evaluation: same contract, no durability. */

import type { EventLog, LogRecord, StoredRecord } from './event-log.js';
import { checkRead, checkTopic, closedError } from './log-errors.js';
import { pollFollow } from './poll-follow.js';

export class MemoryLog implements EventLog {
  private readonly topics = new Map<string, StoredRecord[]>();
  private readonly wakers = new Map<string, Set<() => void>>();
  private closed = false;

  async append(topic: string, records: readonly LogRecord[]): Promise<number[]> {
    checkTopic(topic);
    if (this.closed) throw closedError();
    const log = this.topics.get(topic) ?? [];
    this.topics.set(topic, log);
    const offsets = records.map((r) => {
      const offset = log.length;
      // Copies, so a caller reusing its buffers cannot rewrite history.
      log.push({
        topic,
        offset,
        key: r.key,
        value: Buffer.from(r.value),
        ...(r.headers === undefined ? {} : { headers: { ...r.headers } }),
      });
      return offset;
    });
    if (offsets.length > 0) for (const wake of this.wakers.get(topic) ?? []) wake();
    return offsets;
  }

  async read(topic: string, fromOffset: number, maxRecords?: number): Promise<StoredRecord[]> {
    checkRead(topic, fromOffset, maxRecords);
    if (this.closed) throw closedError();
    const log = this.topics.get(topic) ?? [];
    return log.slice(fromOffset, maxRecords === undefined ? undefined : fromOffset + maxRecords);
  }

  async follow(
    topic: string,
    fromOffset: number,
    onRecord: (r: StoredRecord) => Promise<void> | void,
    signal: AbortSignal,
  ): Promise<void> {
    checkRead(topic, fromOffset, undefined);
    await pollFollow(
      {
        read: (from) => this.read(topic, from, 1000),
        hasMore: (next) => (this.topics.get(topic)?.length ?? 0) > next || this.closed,
        subscribe: (wake) => this.subscribe(topic, wake),
        pollMs: 1000,
        closed: () => this.closed,
      },
      fromOffset,
      onRecord,
      signal,
    );
  }

  async endOffset(topic: string): Promise<number> {
    checkTopic(topic);
    return this.topics.get(topic)?.length ?? 0;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const set of this.wakers.values()) for (const wake of set) wake();
  }

  private subscribe(topic: string, wake: () => void): () => void {
    const set = this.wakers.get(topic) ?? new Set();
    this.wakers.set(topic, set);
    set.add(wake);
    return () => set.delete(wake);
  }
}
