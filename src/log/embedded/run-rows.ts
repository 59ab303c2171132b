/**
 * The run list's rows: per run, its order of first appearance, its status (the run machine's), its
 * rule and its tenant (projections/run-filter-row.ts), in the table `run_rows`.
 *
 * Why the table exists: the run list's filters (state, rule, tenant) ask about every run, and
 * without it only a fold of the whole log answers them (each run's state through the machine: about
 * 11 s over 100,000 runs, before the first filtered page). With a row per run, kept in the very
 * transaction that appends the run's records, a filtered page is a query plus its own runs' events,
 * and the rows can never disagree with the log, not even after a crash.
 *
 * `run_rows_folded.runs_end` says how far the rows are folded: exactly up to that runs-topic offset.
 * The rows are the log's only when it is the topic's end. Behind it, they are never wrong, only
 * stale, and readers fold the log instead: a store written before the table (the next writable open
 * catches up, as `repair` and `migrate` do), records written by an older loopguard, which does not
 * keep the rows (the next append catches up), a record this store cannot read (the rows stop before
 * it and wait there).
 *
 * Keeping a row costs an append almost nothing: an event is read only when it may change the row
 * (mayChangeRow), and a writer through EventStore hands its events over with the records, so they
 * are not decoded again; the status moves by the machine's step from the row's status alone, but
 * at a wait's end, which only the run's state decides: the writer's own status after its append
 * (AppendToStream `status`), or else the run folded again from its records.
 */
import type { StatementSync } from 'node:sqlite';
import type { RecordedEvent, RunState, RunStatus } from '../../domain/index.js';
import { initialState } from '../../domain/index.js';
import { foldRun, statusStep } from '../../machines/index.js';
import {
  mayChangeRow,
  NEW_RUN_ROW,
  ROW_EVENT_TYPES,
  type RunFilterRow,
  rowAfter,
} from '../../projections/index.js';
import { TOPICS } from '../event-log.js';
import { TYPE_HEADER } from '../event-store.js';
import { type EmbeddedDatabase, RUN_ROWS_TABLE } from './database.js';
import { StoredEvents } from './stored-events.js';

/** Records an append's transaction folds, at most, of what others wrote without keeping the rows. */
export const CATCH_UP_PER_APPEND = 1000;
/** Stored records read at a time when catching up: at first, and at most. */
const FIRST_STORED_PAGE = 8;
const STORED_PAGE = 1000;
/**
 * The types whose stored values a catch-up reads (SQL): the value of a record of another type is
 * never needed, and reading it would cost more than passing over it.
 */
const ROW_TYPES = [...ROW_EVENT_TYPES]
  .map((t) => {
    if (!/^[A-Za-z]+$/.test(t)) throw new Error(`an event type that is no name: ${t}`);
    return `'${t}'`;
  })
  .join(', ');

/** The writer's word on one append: the run's status once it is in (its run machine's). */
export interface AppendStatus {
  readonly status: RunStatus;
}

/** A runs record as the keeper folds it. */
export interface RunRecordWritten {
  readonly offset: number;
  readonly runId: string;
  readonly seq: number;
  /** Its value; null for a stored one of a type that changes no row (read only if a fold needs it). */
  readonly value: Uint8Array | null;
  /** Its event type, from the record's header; undefined without one. */
  readonly type: string | undefined;
  /** Its event, when the writer handed it over (not decoded again). */
  readonly event: RecordedEvent | undefined;
  /** The writer's status after the append it came in (the same object for the append's records). */
  readonly status: AppendStatus | undefined;
}

interface Entry {
  readonly firstOffset: number;
  /** What the table holds; undefined for a run first seen in this transaction. */
  stored: RunFilterRow | undefined;
  row: RunFilterRow;
  /** The run's state, once this transaction had to fold it: it then folds every event of the run. */
  state: RunState | undefined;
  /** The append whose writer settled the status: its later records leave the status alone. */
  settledBy: AppendStatus | undefined;
}

class Unfoldable extends Error {}

export class RunRows {
  private readonly events: StoredEvents;
  private readonly sql: Record<
    'folded' | 'setFolded' | 'end' | 'row' | 'insert' | 'update' | 'records' | 'value' | 'earlier',
    StatementSync
  >;

  constructor(private readonly store: EmbeddedDatabase) {
    const db = store.db;
    this.events = new StoredEvents(store);
    this.sql = {
      folded: db.prepare('SELECT runs_end FROM run_rows_folded WHERE one = 0'),
      setFolded: db.prepare('UPDATE run_rows_folded SET runs_end = ? WHERE one = 0'),
      end: db.prepare('SELECT max(topic_offset) AS m FROM records WHERE topic = ?'),
      row: db.prepare(`SELECT first_offset, status, rule, tenant FROM ${RUN_ROWS_TABLE} WHERE run_id = ?`),
      insert: db.prepare(
        `INSERT INTO ${RUN_ROWS_TABLE} (first_offset, run_id, status, rule, tenant) VALUES (?, ?, ?, ?, ?)`,
      ),
      update: db.prepare(`UPDATE ${RUN_ROWS_TABLE} SET status = ?, rule = ?, tenant = ? WHERE run_id = ?`),
      records: db.prepare(
        `SELECT topic_offset, key, seq, type, CASE WHEN type IS NULL OR type IN (${ROW_TYPES}) THEN value END AS value
         FROM (SELECT topic_offset, key, seq, json_extract(headers, '$."${TYPE_HEADER}"') AS type, value FROM records
               WHERE topic = ? AND topic_offset >= ? ORDER BY topic_offset LIMIT ?)`,
      ),
      value: db.prepare('SELECT value FROM records WHERE topic = ? AND topic_offset = ?'),
      earlier: db.prepare('SELECT value FROM records WHERE run_id = ? AND seq < ? ORDER BY seq'),
    };
  }

  /**
   * Inside an append's write transaction, after its records: folds them into the rows, after at
   * most `catchUp` records others wrote before them without keeping the rows. Never fails the
   * append: rows it cannot fold are left as they were, behind the log (readers then fold the log).
   */
  keep(written: readonly RunRecordWritten[], catchUp = CATCH_UP_PER_APPEND): void {
    const first = written[0];
    if (first === undefined) return;
    this.inSavepoint(() => {
      const from = this.folded();
      const fold = new Fold(this, from);
      const end = from < first.offset ? this.foldStored(fold, from, first.offset, catchUp) : from;
      if (end !== first.offset) return fold.finish(end);
      for (const r of written) if (!fold.apply(r)) return fold.finish(r.offset);
      fold.finish((written.at(-1) as RunRecordWritten).offset + 1);
    });
  }

  /**
   * In a write transaction of the caller's: folds at most `limit` records of the log the rows do
   * not have yet. Whether there is more to fold (false: the rows reached the end of the runs
   * topic, or a record they cannot fold stopped them).
   */
  catchUp(limit: number): boolean {
    let more = false;
    this.inSavepoint(() => {
      const from = this.folded();
      const fold = new Fold(this, from);
      const end = this.foldStored(fold, from, Number.POSITIVE_INFINITY, limit);
      fold.finish(end);
      more = end - from === limit;
    });
    return more;
  }

  /** Whether the rows stop before the end of the runs topic. */
  behind(): boolean {
    const { m } = this.sql.end.get(TOPICS.runs) as { m: number | null };
    return this.folded() < (m === null ? 0 : m + 1);
  }

  /** How far the rows are folded (the runs-topic offset they stop before). */
  folded(): number {
    return (this.sql.folded.get() as { runs_end: number } | undefined)?.runs_end ?? 0;
  }

  /**
   * Folds stored records from offset `from` up to `until`, at most `limit` of them, a page at a
   * time; where it stopped (a record it could not fold, or the end). The pages start small: rows
   * stuck at a record they cannot fold meet it again on every append, which should cost little.
   */
  private foldStored(fold: Fold, from: number, until: number, limit: number): number {
    const last = Math.min(until, from + limit);
    let next = from;
    for (let size = FIRST_STORED_PAGE; next < last; size = Math.min(size * 4, STORED_PAGE)) {
      const page = this.sql.records.all(
        TOPICS.runs,
        next,
        Math.min(size, last - next),
      ) as unknown as StoredRow[];
      if (page.length === 0) return next;
      for (const r of page) {
        const rec = {
          offset: r.topic_offset,
          runId: r.key,
          seq: r.seq,
          value: r.value,
          type: typeof r.type === 'string' ? r.type : undefined,
          event: undefined,
          status: undefined,
        };
        if (r.topic_offset !== next || !fold.apply(rec)) return next;
        next++;
      }
    }
    return next;
  }

  /** A run's row as stored, if it has one. */
  stored(runId: string): { firstOffset: number; row: RunFilterRow } | undefined {
    const r = this.sql.row.get(runId) as
      | { first_offset: number; status: RunStatus; rule: string | null; tenant: string | null }
      | undefined;
    return r === undefined
      ? undefined
      : { firstOffset: r.first_offset, row: { status: r.status, rule: r.rule, tenant: r.tenant } };
  }

  /** The event of a record; throws Unfoldable when this store cannot read it. */
  event(r: RunRecordWritten): RecordedEvent {
    const e = r.event ?? this.events.read(r.value ?? this.valueAt(r.offset));
    if (e === undefined || e.runId !== r.runId || e.seq !== r.seq) throw new Unfoldable();
    return e;
  }

  private valueAt(offset: number): Uint8Array {
    return (this.sql.value.get(TOPICS.runs, offset) as { value: Uint8Array }).value;
  }

  /** The run's state before its event `seq`, folded through the machine from its stored records. */
  stateBefore(runId: string, seq: number): RunState {
    let s = initialState(runId);
    for (const { value } of this.sql.earlier.all(runId, seq) as { value: Uint8Array }[]) {
      const e = this.events.read(value);
      if (e === undefined) throw new Unfoldable();
      s = foldRun(s, e);
    }
    return s;
  }

  write(runId: string, e: Entry): void {
    const { status, rule, tenant } = e.row;
    if (e.stored === undefined) this.sql.insert.run(e.firstOffset, runId, status, rule, tenant);
    else this.sql.update.run(status, rule, tenant, runId);
    e.stored = e.row;
  }

  setFolded(end: number): void {
    this.sql.setFolded.run(end);
  }

  private inSavepoint(fn: () => void): void {
    const db = this.store.db;
    db.exec('SAVEPOINT run_rows');
    try {
      fn();
      db.exec('RELEASE run_rows');
    } catch {
      // Left as they were: behind the log, never wrong.
      db.exec('ROLLBACK TO run_rows');
      db.exec('RELEASE run_rows');
    }
  }
}

/**
 * Folds all of the log the run rows do not have yet, in one write transaction: for `repair` and
 * `migrate`, which (re)build a store and leave it with its rows.
 */
export function catchUpRunRows(store: EmbeddedDatabase, lockWaitMs?: number): void {
  const rows = new RunRows(store);
  if (store.read(() => rows.behind()))
    store.writeSync(() => rows.catchUp(Number.POSITIVE_INFINITY), lockWaitMs);
}

interface StoredRow {
  topic_offset: number;
  key: string;
  seq: number;
  type: unknown;
  value: Uint8Array | null;
}

/** One transaction's fold: the rows it touched, written at its end. */
class Fold {
  private readonly entries = new Map<string, Entry>();
  /** Whether a run's state is folded here: then every event of that run is read. */
  private folding = false;

  constructor(
    private readonly rows: RunRows,
    /** Where the rows were folded to when this fold began. */
    private readonly from: number,
  ) {}

  /** Folds one record in; false (nothing changed) when it cannot be folded: the rows stop before it. */
  apply(r: RunRecordWritten): boolean {
    try {
      this.step(r);
      return true;
    } catch (e) {
      if (e instanceof Unfoldable) return false;
      throw e;
    }
  }

  /** Writes the rows that changed and how far they are folded (nothing when nothing was folded). */
  finish(end: number): void {
    for (const [runId, e] of this.entries) if (e.stored !== e.row) this.rows.write(runId, e);
    if (end !== this.from) this.rows.setFolded(end);
  }

  private step(r: RunRecordWritten): void {
    const type = r.event?.event.type ?? r.type;
    // Most events (a call's request and result) change no row: passed over before anything else.
    if (!this.folding && r.seq !== 1 && type !== undefined && !ROW_EVENT_TYPES.has(type)) return;
    const known = this.entries.get(r.runId) ?? this.load(r);
    if (known.state === undefined && type !== undefined && !mayChangeRow(known.row, type)) {
      this.entries.set(r.runId, known);
      return;
    }
    const event = this.rows.event(r);
    let state = known.state;
    let settledBy = known.settledBy;
    let status: RunStatus;
    if (state !== undefined) {
      state = foldRun(state, event);
      status = state.status;
    } else if (settledBy !== undefined && settledBy === r.status) status = known.row.status;
    else {
      const step = statusStep(known.row.status, event);
      if (step !== null) status = step;
      else if (r.status !== undefined) {
        status = r.status.status;
        settledBy = r.status;
      } else {
        state = foldRun(this.rows.stateBefore(r.runId, r.seq), event);
        status = state.status;
      }
    }
    known.row = rowAfter(known.row, event, status);
    known.state = state;
    if (state !== undefined) this.folding = true;
    known.settledBy = settledBy;
    this.entries.set(r.runId, known);
  }

  /** The run's entry from the table, or a new one at its first record. */
  private load(r: RunRecordWritten): Entry {
    const stored = this.rows.stored(r.runId);
    if (stored !== undefined)
      return { ...stored, stored: stored.row, state: undefined, settledBy: undefined };
    // A run without a row is first seen here; anything else is a log the rows cannot follow.
    if (r.seq !== 1) throw new Unfoldable();
    return {
      firstOffset: r.offset,
      stored: undefined,
      row: NEW_RUN_ROW,
      state: undefined,
      settledBy: undefined,
    };
  }
}
