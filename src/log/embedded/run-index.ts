/**
 * The embedded store's run list: run ids in the order runs first appeared in the log, read from
 * the run index (database.ts, RUN_STARTS_INDEX) a page at a time, with how many runs there are.
 * A page costs its own rows and a count over the index, never a read of the log; a store opened
 * read-only that lacks the index (written before it) gives the same answers from a table scan.
 */
import type { StatementSync } from 'node:sqlite';
import { type EmbeddedDatabase, sqlLimit } from './database.js';

export interface RunIndexPage {
  /** Runs in the log. */
  readonly total: number;
  /** The ids of runs offset+1 to offset+limit, in order of first appearance. */
  readonly runIds: readonly string[];
}

export class RunIndex {
  private readonly count: StatementSync;
  private readonly ids: StatementSync;

  constructor(private readonly store: EmbeddedDatabase) {
    this.count = store.db.prepare('SELECT count(*) AS n FROM records WHERE seq = 1');
    this.ids = store.db.prepare(
      'SELECT key FROM records WHERE seq = 1 ORDER BY topic_offset LIMIT ? OFFSET ?',
    );
  }

  /** Whether pages come from the index (false: a store written before it, opened read-only). */
  get indexed(): boolean {
    return this.store.hasRunIndex();
  }

  page(offset: number, limit: number): RunIndexPage {
    return this.store.readTransaction(() => {
      const { n } = this.count.get() as { n: number };
      const rows = this.ids.all(sqlLimit(limit), offset) as { key: string }[];
      return { total: n, runIds: rows.map((r) => r.key) };
    });
  }
}
