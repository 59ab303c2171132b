/**
 * A filtered page of the run list from the run rows (run-rows.ts): the matching runs in order of
 * first appearance, how many match and how many there are, and the page's runs' records, all in
 * one read transaction. Null when the rows are not the log's (no table, or records not folded into
 * them yet); the caller then folds the log.
 */
import type { StatementSync } from 'node:sqlite';
import { asBuffer } from '../../events/wire.js';
import { type EmbeddedDatabase, PENDING_RUNS_RECORDS, RUN_ROWS_TABLE, sqlLimit } from './database.js';

/** The run list's filters (an absent one matches every run); `state` is the run's status. */
export interface RunRowFilters {
  readonly state?: string;
  readonly rule?: string;
  readonly tenant?: string;
}

export interface FilteredRunsPage {
  /** Runs in the log. */
  readonly total: number;
  /** Runs that match the filters. */
  readonly matching: number;
  /** The matching runs offset+1 to offset+limit, each with its records' values in seq order. */
  readonly runs: readonly { readonly runId: string; readonly values: readonly Buffer[] }[];
}

const MATCHES = `(:state IS NULL OR status = :state) AND (:rule IS NULL OR rule = :rule) AND (:tenant IS NULL OR tenant = :tenant)`;

export class FilteredRuns {
  private sql: Record<'pending' | 'total' | 'matching' | 'ids' | 'values', StatementSync> | null = null;

  constructor(private readonly store: EmbeddedDatabase) {}

  /** Whether the store has the rows at all (a store written before them, opened read-only, has not). */
  get kept(): boolean {
    return this.statements() !== null;
  }

  page(f: RunRowFilters, offset: number, limit: number): FilteredRunsPage | null {
    const sql = this.statements();
    if (sql === null) return null;
    return this.store.readTransaction(() => {
      if ((sql.pending.get() as { m: number | null }).m !== null) return null;
      const params = { state: f.state ?? null, rule: f.rule ?? null, tenant: f.tenant ?? null };
      const { n: total } = sql.total.get() as { n: number };
      const { n: matching } = sql.matching.get(params) as { n: number };
      const ids = sql.ids.all({ ...params, limit: sqlLimit(limit), offset }) as { run_id: string }[];
      const runs = ids.map(({ run_id }) => ({
        runId: run_id,
        values: (sql.values.all(run_id) as { value: Uint8Array }[]).map((r) => asBuffer(r.value)),
      }));
      return { total, matching, runs };
    });
  }

  /** Prepared once the table is there (a writable open may add it while a reader runs). */
  private statements(): NonNullable<FilteredRuns['sql']> | null {
    if (this.sql !== null) return this.sql;
    if (!this.store.read(() => this.store.hasRunRows())) return null;
    const db = this.store.db;
    this.sql = {
      // min() reads the partial index of pending records (LIMIT 1 would walk the run_id index).
      pending: db.prepare(`SELECT min(topic_offset) AS m FROM records WHERE ${PENDING_RUNS_RECORDS}`),
      total: db.prepare(`SELECT count(*) AS n FROM ${RUN_ROWS_TABLE}`),
      matching: db.prepare(`SELECT count(*) AS n FROM ${RUN_ROWS_TABLE} WHERE ${MATCHES}`),
      ids: db.prepare(
        `SELECT run_id FROM ${RUN_ROWS_TABLE} WHERE ${MATCHES} ORDER BY first_offset LIMIT :limit OFFSET :offset`,
      ),
      values: db.prepare('SELECT value FROM records WHERE run_id = ? ORDER BY seq'),
    };
    return this.sql;
  }
}
