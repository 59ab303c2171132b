/**
 * The run list's rows (table `run_rows`): per run, its order of first appearance, its status (the
 * run machine's), its rule and its tenant (projections/run-filter-row.ts).
 *
 * The run list's filters ask about every run; without the rows only a fold of the whole log
 * answers them. Kept in the very transaction that appends a run's records, the rows never
 * disagree with the log, even after a crash: a filtered page is a query plus its runs' events.
 *
 * Each runs record says whether it is folded into the rows (`records.rows_folded`, database.ts);
 * the records not folded yet are an index of their own, empty when the rows are the log's. Rows
 * are never wrong, only behind (a store written before the table, records of an older loopguard,
 * a record this store cannot read), and readers then fold the log instead.
 *
 * Keeping a row costs an append almost nothing: an event is read only when it may change the row
 * (mayChangeRow), a writer hands its events over with the records (no decoding again), the status
 * moves by the machine's step from the row's status alone but at a wait's end (then the writer's
 * own status after its append, or the run folded again), and a process that writes alone reads
 * neither the pending index nor its runs' rows (`known`).
 */
import { initialState, type RecordedEvent, type RunState, type RunStatus } from '../../domain/index.js';
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
import { type EmbeddedDatabase, PENDING_RUNS_RECORDS, RUN_ROWS_TABLE } from './database.js';
import type { DatabaseSync } from './sqlite.js';
import { StoredEvents } from './stored-events.js';

/** Pending records (others', who did not keep the rows) an append folds, at most, before its own. */
const CATCH_UP_PER_APPEND = 1000;
/** Pending records read at a time when catching up: at first, and at most. */
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

/** A run's row as the table holds it, with its order of first appearance. */
interface KnownRow {
  readonly firstOffset: number;
  readonly row: RunFilterRow;
}

/** Runs whose rows `known` keeps, the ones touched last. */
const KNOWN_ROWS = 1024;

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

/** The keeper's prepared statements. */
function statements(db: DatabaseSync) {
  return {
    pending: db.prepare(`SELECT min(topic_offset) AS m FROM records WHERE ${PENDING_RUNS_RECORDS}`),
    schemas: db.prepare('SELECT max(id) AS m FROM schemas'),
    end: db.prepare('SELECT max(topic_offset) AS m FROM records WHERE topic = ?'),
    // The type from the header; the value only of a type that may change a row.
    page: db.prepare(
      `SELECT topic_offset, key, seq, type, CASE WHEN type IS NULL OR type IN (${ROW_TYPES}) THEN value END AS value
       FROM (SELECT topic_offset, key, seq, json_extract(headers, '$."${TYPE_HEADER}"') AS type, value FROM records
             WHERE topic = ? AND topic_offset >= ? ORDER BY topic_offset LIMIT ?)`,
    ),
    folded: db.prepare(
      `UPDATE records SET rows_folded = 1 WHERE ${PENDING_RUNS_RECORDS} AND topic_offset < ?`,
    ),
    unfolded: db.prepare('UPDATE records SET rows_folded = NULL WHERE topic = ? AND topic_offset = ?'),
    row: db.prepare(`SELECT first_offset, status, rule, tenant FROM ${RUN_ROWS_TABLE} WHERE run_id = ?`),
    insert: db.prepare(
      `INSERT INTO ${RUN_ROWS_TABLE} (first_offset, run_id, status, rule, tenant) VALUES (?, ?, ?, ?, ?)`,
    ),
    update: db.prepare(`UPDATE ${RUN_ROWS_TABLE} SET status = ?, rule = ?, tenant = ? WHERE run_id = ?`),
    value: db.prepare('SELECT value FROM records WHERE topic = ? AND topic_offset = ?'),
    earlier: db.prepare('SELECT value FROM records WHERE run_id = ? AND seq < ? ORDER BY seq'),
  };
}

export class RunRows {
  private readonly events: StoredEvents;
  /**
   * The rows of the runs this process's last committed keep touched, and the runs-topic end it
   * left with nothing pending: while the next keep's records start there, nobody else wrote a runs
   * record meanwhile (offsets are dense, given out under the write lock), so that keep reads
   * neither the rows nor the pending index.
   */
  private known: { readonly end: number; readonly rows: Map<string, KnownRow> } | null = null;
  /**
   * The pending record this process last failed to fold, and the newest schema then: the rows
   * stay stuck there until the store holds another schema, so an append does not retry it meanwhile.
   */
  private stuck: { readonly offset: number; readonly schema: number | null } | null = null;
  /** What the keep of the open transaction leaves (undefined: no keep ran in it; null: unknown). */
  private proposed: { readonly end: number; readonly rows: Map<string, KnownRow> } | null | undefined;
  private readonly sql: ReturnType<typeof statements>;

  constructor(private readonly store: EmbeddedDatabase) {
    this.events = new StoredEvents(store);
    this.sql = statements(store.db);
  }

  /**
   * Inside an append's write transaction, after its runs records, which it inserted as folded
   * (`rows_folded` 1): folds them into the rows, after at most `catchUp` records from the first
   * pending one (written by a writer that does not keep the rows, or that the rows could not take).
   * The rows hold exactly the records before the first pending one: where it cannot fold a record,
   * it flags that one pending (the records after it count as not folded, whatever their flag), so
   * the rows are never taken for the log's; and it never fails the append for them.
   */
  keep(written: readonly RunRecordWritten[], catchUp = CATCH_UP_PER_APPEND): void {
    const first = written[0];
    const last = written.at(-1);
    if (first === undefined || last === undefined) return;
    const end = last.offset + 1;
    // Taken: it comes back only when this transaction commits.
    const known = this.known;
    this.known = null;
    const current = known !== null && known.end === first.offset;
    const rows = current ? known.rows : new Map<string, KnownRow>();
    this.proposed = null;
    const done = this.inSavepoint(() => {
      const fold = new Fold(this, rows);
      const pending = current ? null : this.firstPending();
      if (pending !== null) {
        if (this.stuckAt(pending)) return true;
        const stop = this.foldFrom(fold, pending, first.offset, catchUp);
        if (!this.settle(fold, pending, stop, first.offset)) return true;
      }
      for (const r of written)
        if (!fold.apply(r)) {
          fold.finish();
          this.sql.unfolded.run(TOPICS.runs, r.offset);
          this.stick(r.offset);
          return true;
        }
      fold.finish();
      this.proposed = { end, rows };
      return true;
    });
    // Nothing of the fold is left (it threw): from its first record on, its own are not folded.
    if (done === undefined) this.sql.unfolded.run(TOPICS.runs, first.offset);
  }

  /** The write transaction of the last keep committed: what it left is known. */
  committed(): void {
    if (this.proposed !== undefined) this.known = this.proposed;
    this.proposed = undefined;
  }

  /** The write transaction of the last keep failed: nothing of it is known. */
  failed(): void {
    this.proposed = undefined;
    this.known = null;
  }

  /**
   * In the caller's write transaction: folds at most `limit` records from the first pending one.
   * Whether there is more to fold (false: none is pending, or a record the rows cannot take).
   */
  catchUp(limit: number): boolean {
    this.known = null;
    const more = this.inSavepoint(() => {
      const pending = this.firstPending();
      if (pending === null) return false;
      const fold = new Fold(this, new Map());
      const stop = this.foldFrom(fold, pending, Number.POSITIVE_INFINITY, limit);
      return this.settle(fold, pending, stop, this.runsEnd()) ? false : stop - pending === limit;
    });
    return more ?? false;
  }

  /** Whether any runs record is not folded into the rows yet. */
  behind(): boolean {
    return this.firstPending() !== null;
  }

  private firstPending(): number | null {
    return (this.sql.pending.get() as { m: number | null }).m;
  }

  /** Whether the rows are stuck at `pending`, as this process last found them (nothing new to read it with). */
  private stuckAt(pending: number): boolean {
    return this.stuck?.offset === pending && this.stuck.schema === this.newestSchema();
  }

  private stick(offset: number): void {
    this.stuck = { offset, schema: this.newestSchema() };
  }

  private newestSchema(): number | null {
    return (this.sql.schemas.get() as { m: number | null }).m;
  }

  private runsEnd(): number {
    const { m } = this.sql.end.get(TOPICS.runs) as { m: number | null };
    return m === null ? 0 : m + 1;
  }

  /**
   * Writes what `fold` folded of the records from `from` (the first pending one) to `stop`, and
   * flags `stop` the first pending record when it is short of `until` (it is already, where
   * nothing was folded: rows stuck there write nothing); whether it reached `until`.
   */
  private settle(fold: Fold, from: number, stop: number, until: number): boolean {
    fold.finish();
    if (stop === from) return stop >= until;
    this.sql.folded.run(stop);
    if (stop >= until) return true;
    this.sql.unfolded.run(TOPICS.runs, stop);
    return false;
  }

  /**
   * Folds stored records from offset `from` up to `until`, at most `limit` of them, a page at a
   * time; where it stopped (a record it could not fold, the limit, or `until`). The pages start
   * small: rows stuck at a record they cannot fold meet it again on every append, at little cost.
   */
  private foldFrom(fold: Fold, from: number, until: number, limit: number): number {
    const last = Math.min(until, from + limit);
    let next = from;
    for (let size = FIRST_STORED_PAGE; next < last; size = Math.min(size * 4, STORED_PAGE)) {
      const page = this.sql.page.all(
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
        // Short of `last`, a record stopped it.
        if (r.topic_offset !== next || !fold.apply(rec)) {
          this.stick(next);
          return next;
        }
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

  /** `fn` in a savepoint; undefined when it threw (nothing of it is left: the rows stay as they were). */
  private inSavepoint<T>(fn: () => T): T | undefined {
    try {
      return this.store.savepoint(fn);
    } catch {
      return undefined;
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
    /** Rows known to be the table's (read instead of it), kept up to date as this fold writes. */
    private readonly known: Map<string, KnownRow>,
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

  /** Writes the rows that changed (and keeps them as known). */
  finish(): void {
    for (const [runId, e] of this.entries) {
      if (e.stored !== e.row) this.rows.write(runId, e);
      this.known.delete(runId);
      this.known.set(runId, { firstOffset: e.firstOffset, row: e.row });
    }
    for (const runId of this.known.keys()) {
      if (this.known.size <= KNOWN_ROWS) break;
      this.known.delete(runId);
    }
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
    const stored = this.known.get(r.runId) ?? this.rows.stored(r.runId);
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
