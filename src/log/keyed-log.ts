/**
 * A local EventLog that also indexes records by key: what the per-run stream needs from the
 * memory and embedded adapters. On the runs topic a key's record count is the run's last seq.
 */
import { ConflictError, LoopguardError } from '../domain/errors.js';
import type { RunStatus } from '../domain/events.js';
import type { LogRecord, StoredRecord } from './event-log.js';
import { checkOffset } from './log-errors.js';
import type { RunLog } from './run-log.js';

/** Record values of one topic, in offset order: all a reader of every event needs (a rebuild). */
export interface ValuePage {
  readonly values: readonly Buffer[];
  /** The offset after the page's last record (the next page's start). */
  readonly next: number;
}

export interface KeyedAppendOptions {
  /**
   * On the runs topic: the run's status once these records are in, as the writer's run machine has
   * it; the embedded log's run rows take it instead of folding the run (run-rows.ts).
   */
  readonly runStatus?: RunStatus;
}

export interface KeyedLog extends RunLog {
  /**
   * The values of the records from `fromOffset` on, at most `maxRecords`: no keys, headers or
   * record objects, which cost the embedded log more than the values themselves.
   */
  readValues(topic: string, fromOffset: number, maxRecords: number): Promise<ValuePage>;
  /**
   * The values of the runs topic's run starts (each run's first record, its RunStarted) from
   * `fromOffset` on, at most `maxRecords`: what a run's children are found from without reading
   * every record of the log.
   */
  readRunStarts(fromOffset: number, maxRecords: number): Promise<ValuePage>;
  /** The records of `key`, in offset order, skipping its first `fromIndex`. */
  readKey(topic: string, key: string, fromIndex: number): Promise<StoredRecord[]>;
  /**
   * Appends records (all keyed `key`) only if `key` has exactly `expectedCount` records when the
   * write happens (for the embedded log: in the write transaction, after every other process's
   * records); otherwise rejects with `conflict` and writes nothing.
   */
  appendKeyed(
    topic: string,
    key: string,
    expectedCount: number,
    records: readonly LogRecord[],
    opts?: KeyedAppendOptions,
  ): Promise<number[]>;
  /**
   * Appends records only if `topic` ends at `expectedEnd` when the write happens (for the embedded
   * log: in the write transaction, after every other process's records); otherwise rejects with
   * `conflict` and writes nothing. The copy projectors of two processes on one data dir append
   * this way, so they never both copy one record.
   */
  appendAfter(topic: string, expectedEnd: number, records: readonly LogRecord[]): Promise<number[]>;
}

/** The page of values of `records`, read from `fromOffset`. */
export function valuePage(records: readonly StoredRecord[], fromOffset: number): ValuePage {
  return { values: records.map((r) => r.value), next: (records.at(-1)?.offset ?? fromOffset - 1) + 1 };
}

export function checkKeyed(key: string, expectedCount: number, records: readonly LogRecord[]): void {
  checkOffset('expectedCount', expectedCount);
  for (const r of records)
    if (r.key !== key)
      throw new LoopguardError('bad_key', `appendKeyed(${key}): a record is keyed ${JSON.stringify(r.key)}`);
}

export function keyConflict(topic: string, key: string, expected: number, actual: number): LoopguardError {
  return new ConflictError(
    'conflict',
    `${topic}/${key}: the append expected ${expected} records, there are ${actual}; another writer got there first`,
    { details: { topic, key, expected, actual } },
  );
}

export function endConflict(topic: string, expected: number, actual: number): LoopguardError {
  return new ConflictError(
    'conflict',
    `${topic}: the append expected the topic to end at ${expected}, it ends at ${actual}; another writer got there first`,
    { details: { topic, expected, actual } },
  );
}

/** Offsets per key, kept as records are appended or found: the index both local adapters share. */
export class KeyIndex {
  private readonly offsets = new Map<string, number[]>();

  add(key: string, offset: number): void {
    const list = this.offsets.get(key);
    if (list === undefined) this.offsets.set(key, [offset]);
    else list.push(offset);
  }

  count(key: string): number {
    return this.offsets.get(key)?.length ?? 0;
  }

  from(key: string, fromIndex: number): readonly number[] {
    return this.offsets.get(key)?.slice(fromIndex) ?? [];
  }
}
