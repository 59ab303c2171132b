/**
 * The default, embedded EventLog: the `records` table of the data dir's SQLite database (see
 * database.ts). Each topic's records have dense offsets from 0 (`topic_offset`); a runs record
 * also carries its run (`run_id`, its key) and seq, and `UNIQUE(run_id, seq)` backs the append at
 * an expected seq: whichever process writes a seq second gets `conflict`, never a silent drop.
 *
 * append() resolves once its transaction committed; appends issued in one event-loop turn share a
 * transaction and its fsync (group commit). Any number of processes read and write one data dir
 * at once; a follower polls for others' records every pollMs.
 */
import type { StatementSync } from 'node:sqlite';
import { LoopguardError } from '../../domain/errors.js';
import { asBuffer } from '../../events/wire.js';
import type { RunStream } from '../../ports/run-stream.js';
import { type LogRecord, type StoredRecord, TOPICS } from '../event-log.js';
import { type EventStore, TYPE_HEADER } from '../event-store.js';
import {
  checkKeyed,
  endConflict,
  type KeyedAppendOptions,
  type KeyedLog,
  keyConflict,
  type ValuePage,
  valuePage,
} from '../keyed-log.js';
import { checkOffset, checkRead, closedError } from '../log-errors.js';
import { LogRunStream } from '../log-run-stream.js';
import { pollFollow, Wakers } from '../poll-follow.js';
import { storeOn } from '../run-log.js';
import {
  type DatabaseOptions,
  EmbeddedDatabase,
  isUniqueViolation,
  sqlLimit,
  storeError,
} from './database.js';
import { FilteredRuns, type FilteredRunsPage, type RunRowFilters } from './filtered-runs.js';
import { RunIndex, type RunIndexPage } from './run-index.js';
import { type AppendStatus, type RunRecordWritten, RunRows } from './run-rows.js';

export interface EmbeddedLogOptions extends DatabaseOptions {
  /** Extra time a batch waits for more appends before it is committed; 0 (default) = next event-loop turn. */
  readonly groupCommitMs?: number;
  /** How often a follower looks for records written by another process. */
  readonly pollMs?: number;
  /**
   * The largest record (key, headers and value) an append may write; a larger one is refused
   * before anything is written. Default 1 MiB, Kafka's default message limit.
   */
  readonly maxRecordBytes?: number;
}

interface Pending {
  readonly topic: string;
  readonly records: readonly LogRecord[];
  /** For a conditional append: how many records its key must have when the batch is written. */
  readonly expect?: { readonly key: string; readonly count: number };
  /** For an append after a topic's end (appendAfter): where the topic must end when it is written. */
  readonly expectEnd?: number;
  /** The writer's run status once the append is in (KeyedAppendOptions.runStatus). */
  readonly status?: AppendStatus;
  readonly resolve: (offsets: number[]) => void;
  readonly reject: (e: unknown) => void;
}

interface Row {
  topic: string;
  topic_offset: number;
  key: string;
  headers: string | null;
  value: Uint8Array;
}

export const DEFAULT_DATA_DIR = './.loopguard';
const DEFAULT_MAX_RECORD_BYTES = 1024 * 1024;
const FOLLOW_PAGE = 1000;
/** Records of the log a writable open folds into the run rows per transaction, catching them up. */
const CATCH_UP_PAGE = 20_000;
const COLUMNS = 'topic, topic_offset, key, headers, value';
/**
 * A page of values as one SQLite value: the values back to back, with their lengths and offsets as
 * text. Each BLOB of a row result is its own ArrayBuffer on the JavaScript side, which costs more
 * than the SQL; concatenated (group_concat and CAST keep BLOB bytes as they are), a page is one.
 * SQLite does not promise the subquery's order: the offsets come along so toValuePage checks it.
 */
const VALUES = `SELECT CAST(group_concat(value, x'') AS BLOB), group_concat(length(value)), group_concat(topic_offset)
  FROM (SELECT topic_offset, value FROM records WHERE topic = ? AND topic_offset >= ? ORDER BY topic_offset LIMIT ?)`;

/** Bytes a record takes: what the size limit is checked against. */
function recordBytes(rec: LogRecord): number {
  const headers = rec.headers === undefined ? 0 : Buffer.byteLength(JSON.stringify(rec.headers));
  return Buffer.byteLength(rec.key) + headers + rec.value.length;
}

export class EmbeddedLog implements KeyedLog {
  private readonly wakers = new Wakers();
  private readonly runIndex: RunIndex;
  /** Kept by writers only (a writable open has the table; a reader of an old store has not). */
  private readonly runRows: RunRows | null;
  private readonly filteredRuns: FilteredRuns;
  private readonly insert: StatementSync | null;
  private queue: Pending[] = [];
  private flushing: Promise<void> | undefined;
  private closed = false;
  private readonly sql: Record<
    'end' | 'runHead' | 'keyCount' | 'read' | 'readKey' | 'readRun' | 'readValues' | 'readRunStarts',
    StatementSync
  >;

  private constructor(
    private readonly store: EmbeddedDatabase,
    private readonly opts: Required<Pick<EmbeddedLogOptions, 'groupCommitMs' | 'pollMs' | 'maxRecordBytes'>>,
  ) {
    const db = store.db;
    this.runIndex = new RunIndex(store);
    this.runRows = store.readOnly ? null : new RunRows(store);
    // Writers only: a store written before the run rows, opened read-only, lacks rows_folded. A
    // runs record is folded into the run rows in its own transaction (runRows.keep).
    this.insert = store.readOnly
      ? null
      : db.prepare(
          'INSERT INTO records (topic, topic_offset, key, run_id, seq, at_ms, headers, value, rows_folded) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
        );
    this.filteredRuns = new FilteredRuns(store);
    this.sql = {
      end: db.prepare('SELECT max(topic_offset) AS m FROM records WHERE topic = ?'),
      runHead: db.prepare('SELECT max(seq) AS m FROM records WHERE run_id = ?'),
      keyCount: db.prepare(
        'SELECT count(*) AS n FROM records WHERE topic = ? AND key = ? AND run_id IS NULL',
      ),
      read: db.prepare(
        `SELECT ${COLUMNS} FROM records WHERE topic = ? AND topic_offset >= ? ORDER BY topic_offset LIMIT ?`,
      ),
      readKey: db.prepare(
        `SELECT ${COLUMNS} FROM records WHERE topic = ? AND key = ? AND run_id IS NULL ORDER BY topic_offset LIMIT -1 OFFSET ?`,
      ),
      readRun: db.prepare(`SELECT ${COLUMNS} FROM records WHERE run_id = ? AND seq > ? ORDER BY seq`),
      readValues: db.prepare(VALUES),
      // The run index (RUN_STARTS_INDEX): a run's first record is the one at seq 1.
      readRunStarts: db.prepare(
        `SELECT ${COLUMNS} FROM records WHERE seq = 1 AND topic_offset >= ? ORDER BY topic_offset LIMIT ?`,
      ),
    };
    this.sql.readValues.setReturnArrays(true);
  }

  /** Opens (creating if needed, unless readOnly) the data dir's database. */
  static async open(dir: string = DEFAULT_DATA_DIR, opts: EmbeddedLogOptions = {}): Promise<EmbeddedLog> {
    const log = new EmbeddedLog(EmbeddedDatabase.open(dir, opts), {
      groupCommitMs: opts.groupCommitMs ?? 0,
      pollMs: opts.pollMs ?? 100,
      maxRecordBytes: opts.maxRecordBytes ?? DEFAULT_MAX_RECORD_BYTES,
    });
    await log.catchUpRunRows();
    return log;
  }

  /**
   * Folds into the run rows what the log holds beyond them, a page per transaction so other
   * writers get their turns in between. Rows that could not be caught up (the lock held too long, a
   * full disk) stay behind, never wrong: readers fold the log meanwhile, the next append catches up.
   */
  private async catchUpRunRows(): Promise<void> {
    const rows = this.runRows;
    if (rows === null || !this.store.read(() => rows.behind())) return;
    try {
      while (await this.store.write(() => rows.catchUp(CATCH_UP_PAGE)))
        await new Promise<void>((r) => setImmediate(r));
    } catch {
      // Behind, as said.
    }
  }

  /** The database file, for messages. */
  get path(): string {
    return this.store.path;
  }

  append(topic: string, records: readonly LogRecord[]): Promise<number[]> {
    return this.enqueue(topic, records);
  }

  appendKeyed(
    topic: string,
    key: string,
    expectedCount: number,
    records: readonly LogRecord[],
    opts: KeyedAppendOptions = {},
  ): Promise<number[]> {
    checkKeyed(key, expectedCount, records);
    const status = opts.runStatus === undefined ? undefined : { status: opts.runStatus };
    return this.enqueue(topic, records, { expect: { key, count: expectedCount }, status });
  }

  async appendAfter(topic: string, expectedEnd: number, records: readonly LogRecord[]): Promise<number[]> {
    checkOffset('expectedEnd', expectedEnd);
    return this.enqueue(topic, records, { expectEnd: expectedEnd });
  }

  async readKey(topic: string, key: string, fromIndex: number): Promise<StoredRecord[]> {
    this.checkOpen(topic, fromIndex);
    const rows = this.store.read(() =>
      topic === TOPICS.runs
        ? this.sql.readRun.all(key, fromIndex)
        : this.sql.readKey.all(topic, key, fromIndex),
    );
    return (rows as unknown as Row[]).map(toStored);
  }

  async read(topic: string, fromOffset: number, maxRecords?: number): Promise<StoredRecord[]> {
    this.checkOpen(topic, fromOffset, maxRecords);
    const rows = this.store.read(() => this.sql.read.all(topic, fromOffset, sqlLimit(maxRecords ?? -1)));
    return (rows as unknown as Row[]).map(toStored);
  }

  async readValues(topic: string, fromOffset: number, maxRecords: number): Promise<ValuePage> {
    this.checkOpen(topic, fromOffset, maxRecords);
    const [bytes, lengths, offsets] = this.store.read(() =>
      this.sql.readValues.get(topic, fromOffset, sqlLimit(maxRecords)),
    ) as unknown as [Uint8Array | null, string | null, string | null];
    if (bytes === null || lengths === null || offsets === null) return { values: [], next: fromOffset };
    const page = toValuePage(bytes, lengths, offsets, fromOffset);
    if (page !== undefined) return page;
    return valuePage(await this.read(topic, fromOffset, maxRecords), fromOffset);
  }

  async readRunStarts(fromOffset: number, maxRecords: number): Promise<ValuePage> {
    this.checkOpen(TOPICS.runs, fromOffset, maxRecords);
    const rows = this.store.read(() => this.sql.readRunStarts.all(fromOffset, sqlLimit(maxRecords)));
    return valuePage((rows as unknown as Row[]).map(toStored), fromOffset);
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
        read: (from) => this.read(topic, from, FOLLOW_PAGE),
        hasMore: (next) => this.closed || this.endSync(topic) > next,
        subscribe: (wake) => this.wakers.subscribe(topic, wake),
        pollMs: this.opts.pollMs,
        closed: () => this.closed,
      },
      fromOffset,
      onRecord,
      signal,
    );
  }

  /** Runs offset+1 to offset+limit in order of first appearance, and how many there are (run-index.ts). */
  async runPage(offset: number, limit: number): Promise<RunIndexPage> {
    this.checkOpen(TOPICS.runs, offset, limit);
    return this.runIndex.page(offset, limit);
  }

  /** Whether runPage reads the run index (false: an old store opened read-only, pages scan the table). */
  get runIndexed(): boolean {
    return this.runIndex.indexed;
  }

  /**
   * The runs that match `filters`, offset+1 to offset+limit, from the run rows (run-rows.ts), with
   * their records; null when the rows are not the log's (filtered-runs.ts): then fold the log.
   */
  async filteredRunPage(
    filters: RunRowFilters,
    offset: number,
    limit: number,
  ): Promise<FilteredRunsPage | null> {
    this.checkOpen(TOPICS.runs, offset, limit);
    return this.filteredRuns.page(filters, offset, limit);
  }

  /** Whether the store has run rows at all (false: an old store opened read-only). */
  get runRowsKept(): boolean {
    return this.filteredRuns.kept;
  }

  async endOffset(topic: string): Promise<number> {
    this.checkOpen(topic);
    return this.endSync(topic);
  }

  /** The store port over this log: the key index makes its appends conditional. */
  runStream(events: EventStore): RunStream {
    return new LogRunStream(storeOn(this, events), this);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    while (this.flushing !== undefined) await this.flushing;
    this.store.close();
    this.wakers.wakeAll();
  }

  private checkOpen(topic: string, fromOffset = 0, maxRecords?: number): void {
    checkRead(topic, fromOffset, maxRecords);
    if (this.closed) throw closedError();
  }

  private endSync(topic: string): number {
    const { m } = this.store.read(() => this.sql.end.get(topic)) as { m: number | null };
    return m === null ? 0 : m + 1;
  }

  private async enqueue(
    topic: string,
    records: readonly LogRecord[],
    condition: Pick<Pending, 'expect' | 'expectEnd' | 'status'> = {},
  ): Promise<number[]> {
    this.checkOpen(topic);
    this.store.assertWritable();
    if (records.length === 0 && condition.expect === undefined && condition.expectEnd === undefined)
      return [];
    for (const [i, r] of records.entries()) {
      const bytes = recordBytes(r);
      if (bytes > this.opts.maxRecordBytes)
        throw new LoopguardError(
          'record_too_large',
          `${topic}: record ${i} of the append (key ${JSON.stringify(r.key)}) takes ${bytes} bytes, over the limit of ${this.opts.maxRecordBytes} (maxRecordBytes); nothing was written`,
          { details: { topic, key: r.key, bytes, limit: this.opts.maxRecordBytes } },
        );
    }
    return new Promise((resolve, reject) => {
      this.queue.push({ topic, records, resolve, reject, ...condition });
      this.flushing ??= this.flushSoon();
    });
  }

  /** Waits a turn (or groupCommitMs) so appends issued meanwhile share the transaction and its fsync. */
  private async flushSoon(): Promise<void> {
    await new Promise<void>((r) => {
      if (this.opts.groupCommitMs > 0) setTimeout(r, this.opts.groupCommitMs);
      else setImmediate(r);
    });
    try {
      while (this.queue.length > 0) {
        const batch = this.queue;
        this.queue = [];
        let outcomes: Outcome[];
        try {
          outcomes = await this.store.write(() => this.writeBatch(batch));
          this.runRows?.committed();
        } catch (e) {
          this.runRows?.failed();
          const err = storeError(e, this.store.path);
          for (const p of batch) p.reject(err);
          continue;
        }
        const topics = new Set<string>();
        batch.forEach((p, i) => {
          const o = outcomes[i] as Outcome;
          if ('error' in o) p.reject(o.error);
          else {
            p.resolve(o.offsets);
            topics.add(p.topic);
          }
        });
        for (const t of topics) this.wakers.wake(t);
      }
    } finally {
      this.flushing = undefined;
    }
  }

  /**
   * Inside the write transaction: each append's condition is checked against what every process
   * committed before, plus the appends before it in this batch, then its rows are inserted; last,
   * the runs records written are folded into the run rows, in the same transaction.
   */
  private writeBatch(batch: readonly Pending[]): Outcome[] {
    // Not null: enqueue refuses appends to a log opened read-only.
    const insert = this.insert as StatementSync;
    const ends = new Map<string, number>();
    const heads = new Map<string, number>();
    const now = Date.now();
    const runs: RunRecordWritten[] = [];
    const outcomes = batch.map((p): Outcome => {
      const count = (key: string): number => {
        const cached = heads.get(`${p.topic}\0${key}`);
        if (cached !== undefined) return cached;
        const n =
          p.topic === TOPICS.runs
            ? ((this.sql.runHead.get(key) as { m: number | null }).m ?? 0)
            : (this.sql.keyCount.get(p.topic, key) as { n: number }).n;
        heads.set(`${p.topic}\0${key}`, n);
        return n;
      };
      if (p.expect !== undefined) {
        const actual = count(p.expect.key);
        if (actual !== p.expect.count)
          return { error: keyConflict(p.topic, p.expect.key, p.expect.count, actual) };
      }
      let next = ends.get(p.topic) ?? this.endSync(p.topic);
      if (p.expectEnd !== undefined && next !== p.expectEnd)
        return { error: endConflict(p.topic, p.expectEnd, next) };
      const offsets: number[] = [];
      const written: RunRecordWritten[] = [];
      try {
        this.store.savepoint(() => {
          for (const r of p.records) {
            const seq = count(r.key) + 1;
            const isRun = p.topic === TOPICS.runs;
            if (isRun)
              written.push({
                offset: next,
                runId: r.key,
                seq,
                value: r.value,
                type: r.headers?.[TYPE_HEADER],
                event: r.event,
                status: p.status,
              });
            insert.run(
              p.topic,
              next,
              r.key,
              isRun ? r.key : null,
              isRun ? seq : null,
              now,
              r.headers === undefined ? null : JSON.stringify(r.headers),
              r.value,
              isRun ? 1 : null,
            );
            heads.set(`${p.topic}\0${r.key}`, seq);
            offsets.push(next++);
          }
        });
      } catch (e) {
        heads.clear();
        // UNIQUE(run_id, seq): a seq another writer took first is the store's conflict.
        if (isUniqueViolation(e) && p.expect !== undefined)
          return { error: keyConflict(p.topic, p.expect.key, p.expect.count, count(p.expect.key)) };
        throw e;
      }
      ends.set(p.topic, next);
      for (const w of written) runs.push(w);
      return { offsets };
    });
    this.runRows?.keep(runs);
    return outcomes;
  }
}

type Outcome = { readonly offsets: number[] } | { readonly error: LoopguardError };

function toStored(r: Row): StoredRecord {
  const value = asBuffer(r.value);
  return r.headers === null
    ? { topic: r.topic, offset: r.topic_offset, key: r.key, value }
    : { topic: r.topic, offset: r.topic_offset, key: r.key, value, headers: JSON.parse(r.headers) };
}

/**
 * The page of a VALUES row, each value a view of the one buffer; undefined when its rows did not
 * come in offset order (then the caller reads the page row by row).
 */
function toValuePage(
  bytes: Uint8Array,
  lengths: string,
  offsets: string,
  from: number,
): ValuePage | undefined {
  const all = asBuffer(bytes);
  const lens = lengths.split(',');
  const offs = offsets.split(',');
  if (offs.length !== lens.length) return undefined;
  const values: Buffer[] = new Array(lens.length);
  let pos = 0;
  let last = from - 1;
  for (let i = 0; i < lens.length; i++) {
    const offset = Number(offs[i]);
    if (!(offset > last)) return undefined;
    last = offset;
    const end = pos + Number(lens[i]);
    values[i] = all.subarray(pos, end);
    pos = end;
  }
  return pos === all.length ? { values, next: last + 1 } : undefined;
}
