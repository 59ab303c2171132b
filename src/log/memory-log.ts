/** In-memory EventLog for tests and evaluation: same contract, no durability. */

import type { RunStream } from '../ports/run-stream.js';
import { type LogRecord, type StoredRecord, TOPICS } from './event-log.js';
import type { EventStore } from './event-store.js';
import {
  checkKeyed,
  endConflict,
  type KeyedLog,
  KeyIndex,
  keyConflict,
  type ValuePage,
  valuePage,
} from './keyed-log.js';
import { checkOffset, checkRead, checkTopic, closedError } from './log-errors.js';
import { LogRunStream } from './log-run-stream.js';
import { pollFollow, Wakers } from './poll-follow.js';
import { storeOn } from './run-log.js';

export class MemoryLog implements KeyedLog {
  private readonly topics = new Map<string, StoredRecord[]>();
  private readonly keys = new Map<string, KeyIndex>();
  private readonly wakers = new Wakers();
  private closed = false;

  async append(topic: string, records: readonly LogRecord[]): Promise<number[]> {
    checkTopic(topic);
    if (this.closed) throw closedError();
    const log = this.topics.get(topic) ?? [];
    this.topics.set(topic, log);
    const index = this.keyIndex(topic);
    const offsets = records.map((r) => {
      const offset = log.length;
      index.add(r.key, offset);
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
    if (offsets.length > 0) this.wakers.wake(topic);
    return offsets;
  }

  async appendKeyed(
    topic: string,
    key: string,
    expectedCount: number,
    records: readonly LogRecord[],
  ): Promise<number[]> {
    checkTopic(topic);
    checkKeyed(key, expectedCount, records);
    if (this.closed) throw closedError();
    // Check and append in one synchronous step: nothing else can run in between.
    const actual = this.keyIndex(topic).count(key);
    if (actual !== expectedCount) throw keyConflict(topic, key, expectedCount, actual);
    return this.append(topic, records);
  }

  async appendAfter(topic: string, expectedEnd: number, records: readonly LogRecord[]): Promise<number[]> {
    checkTopic(topic);
    checkOffset('expectedEnd', expectedEnd);
    if (this.closed) throw closedError();
    const actual = this.topics.get(topic)?.length ?? 0;
    if (actual !== expectedEnd) throw endConflict(topic, expectedEnd, actual);
    return this.append(topic, records);
  }

  async readKey(topic: string, key: string, fromIndex: number): Promise<StoredRecord[]> {
    checkRead(topic, fromIndex, undefined);
    if (this.closed) throw closedError();
    const log = this.topics.get(topic) ?? [];
    return this.keyIndex(topic)
      .from(key, fromIndex)
      .map((o) => log[o] as StoredRecord);
  }

  async read(topic: string, fromOffset: number, maxRecords?: number): Promise<StoredRecord[]> {
    checkRead(topic, fromOffset, maxRecords);
    if (this.closed) throw closedError();
    const log = this.topics.get(topic) ?? [];
    return log.slice(fromOffset, maxRecords === undefined ? undefined : fromOffset + maxRecords);
  }

  async readValues(topic: string, fromOffset: number, maxRecords: number): Promise<ValuePage> {
    return valuePage(await this.read(topic, fromOffset, maxRecords), fromOffset);
  }

  async readRunStarts(fromOffset: number, maxRecords: number): Promise<ValuePage> {
    const log = await this.read(TOPICS.runs, fromOffset);
    const index = this.keyIndex(TOPICS.runs);
    const starts = log.filter((r) => index.from(r.key, 0)[0] === r.offset).slice(0, maxRecords);
    return valuePage(starts, fromOffset);
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
        subscribe: (wake) => this.wakers.subscribe(topic, wake),
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

  /** The store port over this log: the key index makes its appends conditional. */
  runStream(events: EventStore): RunStream {
    return new LogRunStream(storeOn(this, events), this);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.wakers.wakeAll();
  }

  private keyIndex(topic: string): KeyIndex {
    const index = this.keys.get(topic) ?? new KeyIndex();
    this.keys.set(topic, index);
    return index;
  }
}
