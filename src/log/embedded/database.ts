/**
 * The embedded store's one database file, `<data dir>/loopguard.db`, opened through `node:sqlite`
 * in WAL mode: any number of processes read and write it at once (readers never wait for a
 * writer; writers take turns on SQLite's write lock, waiting a bounded time when it is held).
 *
 * Durability: `synchronous=FULL` by default, so a commit returns only once its WAL frames are
 * fsynced: a decision is on disk before the tool it allows runs. Tables (see the README's
 * "Embedded store"): records, ledger, reissues, schemas, subjects, run_rows.
 */

import { existsSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { IllegalStateError, LoopguardError, UnavailableError } from '../../domain/errors.js';
import { DatabaseSync } from './sqlite.js';

export const DB_FILE = 'loopguard.db';
/** Where the segment log (before SQLite) kept its topics: a data dir to migrate. */
export const SEGMENT_TOPICS_DIR = 'topics';

const SCHEMA_VERSION = 1;

/**
 * The run index: each run's first record (seq 1), in log order, so the run list is paged with
 * LIMIT/OFFSET and counted without reading the log. SQLite keeps it in the transaction of every
 * append. It is an index, not a table, so a store without it (written before it existed) means the
 * same to every version: a writable open adds it (see init), no version change needed.
 */
export const RUN_STARTS_INDEX = 'records_run_starts';
const RUN_STARTS_DDL = `CREATE INDEX IF NOT EXISTS ${RUN_STARTS_INDEX} ON records (topic_offset) WHERE seq = 1;`;

/**
 * The run list's rows (run-rows.ts), and which runs records they hold: a record's `rows_folded` is
 * 1 once folded into them, NULL until then (as a writer that does not keep them leaves it). The
 * partial index RUN_ROWS_PENDING holds the records not folded yet: empty, the rows are the log's.
 * A store written before them gets them from a writable open, every record pending until they
 * catch up: no version change needed.
 */
export const RUN_ROWS_TABLE = 'run_rows';
const RUN_ROWS_PENDING = 'records_rows_pending';
/** The records RUN_ROWS_PENDING holds; a query that reads the index says the same. */
export const PENDING_RUNS_RECORDS = 'run_id IS NOT NULL AND rows_folded IS NULL';
const RUN_ROWS_DDL = `
CREATE TABLE IF NOT EXISTS ${RUN_ROWS_TABLE} (
  first_offset INTEGER PRIMARY KEY,
  run_id TEXT NOT NULL UNIQUE,
  status TEXT NOT NULL,
  rule TEXT,
  tenant TEXT
);
CREATE INDEX IF NOT EXISTS ${RUN_ROWS_PENDING} ON records (topic_offset) WHERE ${PENDING_RUNS_RECORDS};
`;

const DDL = `
CREATE TABLE IF NOT EXISTS records (
  pos INTEGER PRIMARY KEY,
  topic TEXT NOT NULL,
  topic_offset INTEGER NOT NULL,
  key TEXT NOT NULL,
  run_id TEXT,
  seq INTEGER,
  at_ms INTEGER NOT NULL,
  headers TEXT,
  value BLOB NOT NULL,
  rows_folded INTEGER,
  UNIQUE (topic, topic_offset),
  UNIQUE (run_id, seq)
);
-- The runs topic (nearly every record) is read by UNIQUE(run_id, seq); the other topics by key.
CREATE INDEX IF NOT EXISTS records_by_key ON records (topic, key, topic_offset) WHERE run_id IS NULL;
${RUN_STARTS_DDL}
${RUN_ROWS_DDL}
CREATE TABLE IF NOT EXISTS ledger (
  operation_key TEXT PRIMARY KEY,
  status TEXT NOT NULL CHECK (status IN ('claimed', 'completed', 'in_doubt')),
  run_id TEXT NOT NULL,
  call_id TEXT NOT NULL,
  pid INTEGER NOT NULL,
  result_json TEXT,
  reason TEXT,
  at_ms INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS reissues (
  new_key TEXT PRIMARY KEY,
  old_key TEXT NOT NULL,
  note TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS schemas (
  id INTEGER PRIMARY KEY,
  hash TEXT NOT NULL UNIQUE,
  schema TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS subjects (
  subject TEXT NOT NULL,
  id INTEGER NOT NULL REFERENCES schemas (id),
  PRIMARY KEY (subject, id)
) WITHOUT ROWID;
`;

export interface DatabaseOptions {
  /** Open the existing data dir and database for reading only: nothing is created, written or migrated (`read_only`). */
  readonly readOnly?: boolean;
  /** 'batch' (default): fsync every commit (synchronous=FULL). 'none': leave flushing to the OS (tests, benches). */
  readonly fsync?: 'batch' | 'none';
  /** How long a write waits in all for another process's write lock before `store_busy` (default 10 s). */
  readonly busyTimeoutMs?: number;
  /** A cap on the file's size in pages of 4 KiB (PRAGMA max_page_count): a quota; past it writes get `disk_full`. */
  readonly maxPages?: number;
}

/** SQLite's primary result codes this module maps (the low byte of an extended code). */
const SQLITE = {
  BUSY: 5,
  LOCKED: 6,
  READONLY: 8,
  IOERR: 10,
  CORRUPT: 11,
  FULL: 13,
  CANTOPEN: 14,
  NOTADB: 26,
};
const SQLITE_CONSTRAINT_UNIQUE = 2067;
const SQLITE_CONSTRAINT_PRIMARYKEY = 1555;

const errcodeOf = (e: unknown): number | undefined => {
  const c = (e as { errcode?: unknown })?.errcode;
  return typeof c === 'number' ? c : undefined;
};

/** Whether process `pid` is running (EPERM: it is, under another user). A claim or lock of a dead one is stale. */
export const processAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

export const isUniqueViolation = (e: unknown): boolean => {
  const c = errcodeOf(e);
  return c === SQLITE_CONSTRAINT_UNIQUE || c === SQLITE_CONSTRAINT_PRIMARYKEY;
};

const isBusy = (e: unknown): boolean => {
  const c = errcodeOf(e);
  return c !== undefined && ((c & 0xff) === SQLITE.BUSY || (c & 0xff) === SQLITE.LOCKED);
};

/** A foreign SQLite error as a LoopguardError with a code a caller can act on. */
export function storeError(e: unknown, path: string): LoopguardError {
  if (e instanceof LoopguardError) return e;
  const c = errcodeOf(e);
  const why = (e as Error)?.message ?? String(e);
  const primary = c === undefined ? undefined : c & 0xff;
  const opts = { cause: e, details: { path } };
  if (primary === SQLITE.FULL)
    return new UnavailableError(
      'disk_full',
      `${path}: the disk is full (${why}); the write was not acknowledged, everything acknowledged before stays readable`,
      opts,
    );
  if (primary === SQLITE.BUSY || primary === SQLITE.LOCKED)
    return new UnavailableError(
      'store_busy',
      `${path}: another process held the write lock too long (${why})`,
      opts,
    );
  if (primary === SQLITE.READONLY)
    return new IllegalStateError('read_only', `${path}: the database cannot be written (${why})`, opts);
  if (primary === SQLITE.CORRUPT || primary === SQLITE.NOTADB)
    return new LoopguardError('log_corrupt', `${path}: ${why}; run loopguard repair`, opts);
  return new UnavailableError('log_io', `${path}: ${why}`, { retriable: primary === SQLITE.IOERR, cause: e });
}

const needsMigration = (dir: string): LoopguardError =>
  new IllegalStateError(
    'needs_migration',
    `${dir} holds a segment log (written by loopguard before the SQLite store); convert it once with: loopguard migrate --data-dir ${dir}`,
    { details: { dir } },
  );

/** A data dir that holds no store (or cannot be made): `why` says which, naming the dir. */
export const noDataDir = (dir: string, why: string, cause?: unknown): LoopguardError =>
  new LoopguardError('no_data_dir', why, { cause, details: { dir } });

const DEFAULT_BUSY_MS = 10_000;

/**
 * The WAL is checkpointed back into the database once it holds this many pages (SQLite's default
 * is 1,000), and is then written again from its start. Until it first wraps, every commit grows the
 * file, and the fsync of a growing file also commits the file system's journal: such commits took
 * about twice as long as the commits after it (400 to 500 us against 210 on this VM). The WAL is
 * deleted when the last connection closes, so every process that writes starts over: at 1,000
 * pages its first 220 or so guarded calls (about 4.4 pages each) paid that, at 256 the first 60.
 * Measured with `npm run bench`, alternating with 1,000: guarded-call-durable p50 525 to 540 us ->
 * 436 to 453. Four processes on one data dir: p50 about the same (3 to 9% faster in one set of
 * three runs, 3 to 22% slower in another), p99 about a tenth lower; at 128 pages their p50 was a
 * fifth slower (a checkpoint fsyncs the database file, and four writers met one every few commits).
 */
const WAL_CHECKPOINT_PAGES = 256;

/**
 * How long SQLite itself waits for the write lock at BEGIN. Its busy handler blocks the thread and
 * sleeps in growing steps, letting other processes take the lock again and again meanwhile; past
 * this short wait the write is retried asynchronously. Everything else (opening, reads, a commit's
 * checkpoint) waits busyTimeoutMs in the engine: a WAL reader meets a lock only in rare moments.
 */
const ENGINE_WAIT_MS = 2;

export class EmbeddedDatabase {
  private constructor(
    readonly db: DatabaseSync,
    readonly path: string,
    readonly readOnly: boolean,
    private readonly busyTimeoutMs: number,
  ) {}

  /**
   * Opens (creating when writable) the data dir's database. A data dir that still holds the
   * segment log and no database is refused with how to migrate it; a reader never creates
   * anything, so a missing dir or database is `no_data_dir`.
   */
  static open(dataDir: string, opts: DatabaseOptions = {}): EmbeddedDatabase {
    const path = join(dataDir, DB_FILE);
    const readOnly = opts.readOnly ?? false;
    const hasDb = existsSync(path);
    if (!hasDb && existsSync(join(dataDir, SEGMENT_TOPICS_DIR))) throw needsMigration(dataDir);
    if (readOnly) {
      const missing = !isDir(dataDir)
        ? 'does not exist (reading never creates it)'
        : !hasDb
          ? `holds no ${DB_FILE}: nothing was recorded there yet`
          : undefined;
      if (missing !== undefined) throw noDataDir(dataDir, `data dir ${dataDir} ${missing}`);
    } else {
      try {
        mkdirSync(dataDir, { recursive: true });
      } catch (e) {
        // A file in its place, or a parent that cannot be written: the user's to fix, not a bug.
        throw noDataDir(dataDir, `data dir ${dataDir} cannot be made: ${(e as Error).message}`, e);
      }
    }
    return EmbeddedDatabase.openFile(path, opts);
  }

  /** A database at `path` itself (created with the tables unless readOnly): for open, repair and migrate. */
  static openFile(path: string, opts: DatabaseOptions = {}): EmbeddedDatabase {
    const readOnly = opts.readOnly ?? false;
    let db: DatabaseSync;
    try {
      db = new DatabaseSync(path, { readOnly, timeout: opts.busyTimeoutMs ?? DEFAULT_BUSY_MS });
    } catch (e) {
      throw storeError(e, path);
    }
    const out = new EmbeddedDatabase(db, path, readOnly, opts.busyTimeoutMs ?? DEFAULT_BUSY_MS);
    try {
      if (!readOnly) out.init(opts);
      else db.exec('PRAGMA query_only = ON');
    } catch (e) {
      db.close();
      throw storeError(e, path);
    }
    return out;
  }

  private init(opts: DatabaseOptions): void {
    // journal_mode=WAL needs the write lock once per file; it then stays WAL for every connection.
    const mode = this.db.prepare('PRAGMA journal_mode = WAL').get() as { journal_mode: string };
    if (mode.journal_mode !== 'wal')
      throw new UnavailableError(
        'log_io',
        `${this.path}: could not switch to WAL mode (${mode.journal_mode})`,
      );
    this.db.exec(`PRAGMA synchronous = ${opts.fsync === 'none' ? 'OFF' : 'FULL'}`);
    this.db.exec('PRAGMA foreign_keys = ON');
    this.db.exec(`PRAGMA wal_autocheckpoint = ${WAL_CHECKPOINT_PAGES}`);
    if (opts.maxPages !== undefined) this.db.exec(`PRAGMA max_page_count = ${Math.floor(opts.maxPages)}`);
    const { user_version } = this.db.prepare('PRAGMA user_version').get() as { user_version: number };
    if (user_version > SCHEMA_VERSION)
      throw new IllegalStateError(
        'store_too_new',
        `${this.path}: written by a newer loopguard (store version ${user_version}, this one knows ${SCHEMA_VERSION})`,
      );
    if (user_version < SCHEMA_VERSION)
      this.writeSync(
        () => this.db.exec(`${DDL}PRAGMA user_version = ${SCHEMA_VERSION};`),
        this.busyTimeoutMs,
      );
    else if (!this.hasRunIndex() || !this.hasRunRows())
      this.writeSync(() => {
        const cols = this.db.prepare('PRAGMA table_info(records)').all() as { name: string }[];
        if (!cols.some((c) => c.name === 'rows_folded'))
          this.db.exec('ALTER TABLE records ADD COLUMN rows_folded INTEGER');
        this.db.exec(`${RUN_STARTS_DDL}${RUN_ROWS_DDL}`);
      }, this.busyTimeoutMs);
  }

  /** Whether the run list's rows exist (a store written before them, opened only for reading, lacks them). */
  hasRunRows(): boolean {
    return this.hasIndex(RUN_ROWS_PENDING);
  }

  /** Whether the run index exists (a store written before it, opened only for reading, lacks it). */
  hasRunIndex(): boolean {
    return this.hasIndex(RUN_STARTS_INDEX);
  }

  private hasIndex(name: string): boolean {
    return (
      this.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?").get(name) !== undefined
    );
  }

  /**
   * Runs `fn` in one write transaction (BEGIN IMMEDIATE: the write lock first, so two writers
   * never both read and then collide). Another process holding the lock is waited for, in short
   * engine waits and asynchronous retries, up to busyTimeoutMs; then `store_busy`.
   */
  async write<T>(fn: () => T): Promise<T> {
    const until = Date.now() + this.busyTimeoutMs;
    for (let attempt = 0; ; attempt++) {
      try {
        return this.writeSync(fn);
      } catch (e) {
        if (!isBusy(e) || Date.now() >= until) throw storeError(e, this.path);
        // Every other retry yields a whole millisecond, the rest only a turn of the event loop.
        if (attempt % 2 === 0) await new Promise<void>((r) => setImmediate(r));
        else await new Promise((r) => setTimeout(r, 1));
      }
    }
  }

  /**
   * One write transaction, waiting for the lock only in the engine (`lockWaitMs`, blocking): for
   * opening and migrating, where nothing is asynchronous anyway.
   */
  writeSync<T>(fn: () => T, lockWaitMs: number = ENGINE_WAIT_MS): T {
    this.assertWritable();
    this.db.exec(`PRAGMA busy_timeout = ${lockWaitMs}`);
    try {
      this.db.exec('BEGIN IMMEDIATE');
    } finally {
      this.db.exec(`PRAGMA busy_timeout = ${this.busyTimeoutMs}`);
    }
    try {
      const out = fn();
      this.db.exec('COMMIT');
      return out;
    } catch (e) {
      if (this.db.isTransaction) this.db.exec('ROLLBACK');
      throw e;
    }
  }

  assertWritable(): void {
    if (this.readOnly)
      throw new IllegalStateError('read_only', `${this.path} is open for reading only; nothing was written`);
  }

  /** A read, with SQLite errors mapped (a reader in WAL mode does not wait for writers). */
  read<T>(fn: () => T): T {
    try {
      return fn();
    } catch (e) {
      throw storeError(e, this.path);
    }
  }

  /** A read of several statements in one read transaction: all of them see the same moment. */
  readTransaction<T>(fn: () => T): T {
    return this.read(() => {
      this.db.exec('BEGIN');
      try {
        return fn();
      } finally {
        this.db.exec('COMMIT');
      }
    });
  }

  /** `fn` in a savepoint of the open transaction: whatever it wrote is undone if it throws. */
  savepoint<T>(fn: () => T): T {
    this.db.exec('SAVEPOINT step');
    try {
      const out = fn();
      this.db.exec('RELEASE step');
      return out;
    } catch (e) {
      this.db.exec('ROLLBACK TO step');
      this.db.exec('RELEASE step');
      throw e;
    }
  }

  close(): void {
    if (this.db.isOpen) this.db.close();
  }
}

/** A LIMIT for SQLite: -1 (none) for an infinite count. */
export const sqlLimit = (n: number): number => (Number.isFinite(n) ? Math.floor(n) : -1);

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}
