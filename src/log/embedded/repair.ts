/**
 * `loopguard repair`: SQLite's own integrity check (`PRAGMA integrity_check`) on the data dir's
 * database. A sound file is left alone (but for the run index and run rows, added if it lacks
 * them, and the rows caught up with the log). A damaged one is first copied whole (with its WAL) to
 * `<data dir>/damaged/`, never deleted; then every row SQLite can still read is copied, table by
 * table in rowid order, into a fresh database that takes the damaged one's place.
 */
import { copyFileSync, existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { DB_FILE, EmbeddedDatabase, noDataDir } from './database.js';
import { catchUpRunRows } from './run-rows.js';
import { DatabaseSync } from './sqlite.js';

export interface StoreRepair {
  /** `ok` from integrity_check, or the problems it listed. */
  readonly problems: readonly string[];
  /** Where the damaged file was copied; null when the file was sound. */
  readonly keptIn: string | null;
  /** Rows per table after the repair. */
  readonly rows: Readonly<Record<string, number>>;
  /** Per table, the reads that hit damage and were skipped (only after a damaged file). */
  readonly unreadable: Readonly<Record<string, number>>;
}

const TABLES = ['schemas', 'subjects', 'records', 'ledger', 'reissues'] as const;
/** How long the catch-up of a sound store's run rows waits for another process's write lock. */
const LOCK_WAIT_MS = 10_000;

export async function repairDataDir(dir: string, now: () => number = Date.now): Promise<StoreRepair> {
  const path = join(dir, DB_FILE);
  if (!existsSync(path)) throw noDataDir(dir, `${dir} holds no ${DB_FILE} (nothing to repair)`);
  const problems = integrityProblems(path);
  if (problems.length === 0) {
    const store = EmbeddedDatabase.openFile(path);
    try {
      catchUpRunRows(store, LOCK_WAIT_MS);
    } finally {
      store.close();
    }
    return { problems, keptIn: null, rows: countRows(path), unreadable: {} };
  }

  const side = join(dir, 'damaged');
  mkdirSync(side, { recursive: true });
  const keptIn = join(side, `${DB_FILE}.${now()}`);
  copyFileSync(path, keptIn);
  for (const ext of ['-wal', '-shm']) if (existsSync(path + ext)) copyFileSync(path + ext, keptIn + ext);

  const fresh = `${path}.repair`;
  rmSync(fresh, { force: true });
  let salvage: Record<string, number>;
  try {
    salvage = salvageInto(path, fresh);
  } catch (e) {
    // Nothing half-made is left beside the store, which stays as it was (and is kept in damaged/).
    rmSync(fresh, { force: true });
    throw e;
  }
  for (const ext of ['-wal', '-shm']) rmSync(path + ext, { force: true });
  renameSync(fresh, path);
  return { problems, keptIn, rows: countRows(path), unreadable: salvage };
}

function integrityProblems(path: string): string[] {
  let db: DatabaseSync | undefined;
  try {
    db = new DatabaseSync(path, { timeout: 5000 });
    const rows = db.prepare('PRAGMA integrity_check').all() as { integrity_check: string }[];
    const lines = rows.map((r) => r.integrity_check);
    return lines.length === 1 && lines[0] === 'ok' ? [] : lines;
  } catch (e) {
    return [(e as Error).message];
  } finally {
    db?.close();
  }
}

/** Copies every readable row of each table into a new database at `to`; the rows lost per table. */
function salvageInto(from: string, to: string): Record<string, number> {
  const target = EmbeddedDatabase.openFile(to);
  const src = new DatabaseSync(from, { timeout: 5000 });
  const lost: Record<string, number> = {};
  try {
    for (const table of TABLES) {
      lost[table] = 0;
      // Columns both stores have (one written before a column was added lacks it); a record's
      // rows_folded is not copied: the run rows are folded again from the records saved. A file
      // whose schema cannot be read at all (not a database any more) has no row to give.
      let readableCols: string[];
      try {
        readableCols = columnsOf(src, table);
      } catch {
        lost[table] = 1;
        continue;
      }
      const have = new Set(readableCols);
      const cols = columnsOf(target.db, table).filter(
        (c) => have.has(c) && !(table === 'records' && c === 'rows_folded'),
      );
      const insert = target.db.prepare(
        `INSERT OR IGNORE INTO ${table} (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`,
      );
      target.db.exec('BEGIN');
      try {
        for (const row of readable(src, table, cols, () => (lost[table] = (lost[table] ?? 0) + 1)))
          insert.run(...cols.map((c) => row[c] as never));
        target.db.exec('COMMIT');
      } catch (e) {
        target.db.exec('ROLLBACK');
        throw e;
      }
    }
    // The run rows are not copied: folded afresh from the records that were saved.
    catchUpRunRows(target);
  } finally {
    src.close();
    target.close();
  }
  return lost;
}

/**
 * The rows of `table` SQLite can read, page after page: a damaged page ends one scan, and the
 * scan goes on past it (a table without rowid is read in one piece, as far as it goes).
 */
function* readable(
  db: DatabaseSync,
  table: string,
  cols: readonly string[],
  onLost: () => void,
): Generator<Record<string, unknown>> {
  const list = cols.join(', ');
  if (table === 'schemas' || table === 'records') {
    const key = table === 'records' ? 'pos' : 'id';
    let after = -1;
    for (;;) {
      try {
        const rows = db
          .prepare(`SELECT ${list} FROM ${table} WHERE ${key} > ? ORDER BY ${key} LIMIT 500`)
          .all(after) as Record<string, unknown>[];
        if (rows.length === 0) return;
        yield* rows;
        after = Number(rows.at(-1)?.[key]);
      } catch {
        onLost();
        after += 1;
        if (after > maxKey(db, table, key)) return;
      }
    }
  }
  try {
    yield* db.prepare(`SELECT ${list} FROM ${table}`).all() as Record<string, unknown>[];
  } catch {
    onLost();
  }
}

function columnsOf(db: DatabaseSync, table: string): string[] {
  return (db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => c.name);
}

function maxKey(db: DatabaseSync, table: string, key: string): number {
  try {
    return Number(
      (db.prepare(`SELECT max(${key}) AS m FROM ${table}`).get() as { m: number | null }).m ?? -1,
    );
  } catch {
    return -1;
  }
}

function countRows(path: string): Record<string, number> {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    const out: Record<string, number> = {};
    for (const t of TABLES) out[t] = (db.prepare(`SELECT count(*) AS n FROM ${t}`).get() as { n: number }).n;
    return out;
  } finally {
    db.close();
  }
}
