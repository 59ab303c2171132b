/**
 * `loopguard migrate`: converts a data dir the segment log wrote (topics/, ledger/, schemas/) into
 * the SQLite store, once. Every record keeps its topic, offset, key, headers and bytes (the Avro
 * record in Confluent framing), every schema its id, every ledger entry its owner and state. The
 * database is built beside the old files and renamed into place at the end, so an interrupted
 * migration leaves the data dir as it was; the old files are then moved, never deleted, to
 * `<data dir>/segment-log/`.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { IllegalStateError, type LoopguardError } from '../../domain/errors.js';
import { TOPICS } from '../event-log.js';
import { DB_FILE, EmbeddedDatabase, processAlive, SEGMENT_TOPICS_DIR } from './database.js';
import { RunRows } from './run-rows.js';
import { decodeRecord, scanRecords } from './segment-format.js';

export interface Migration {
  /** Records per topic, in offset order from 0. */
  readonly records: Readonly<Record<string, number>>;
  readonly schemas: number;
  readonly ledger: number;
  readonly reissues: number;
  /** Things worth knowing that did not stop the migration (a torn tail that was never acknowledged). */
  readonly notes: readonly string[];
  /** Where the segment log's files went. */
  readonly keptIn: string;
}

const OLD = [SEGMENT_TOPICS_DIR, 'ledger', 'schemas'] as const;

const refuse = (message: string): LoopguardError => new IllegalStateError('migrate_refused', message);

export function migrateDataDir(dir: string): Migration {
  if (!existsSync(join(dir, SEGMENT_TOPICS_DIR))) {
    if (existsSync(join(dir, DB_FILE)))
      throw refuse(`${dir} is already on the SQLite store; nothing to migrate`);
    throw refuse(`${dir} holds no segment log (no ${SEGMENT_TOPICS_DIR}/ directory)`);
  }
  if (existsSync(join(dir, DB_FILE)))
    throw refuse(
      `${dir} holds both a segment log and ${DB_FILE}; move one of them away before migrating (nothing was changed)`,
    );
  liveWriters(dir);
  const tmp = join(dir, `${DB_FILE}.migrating`);
  for (const ext of ['', '-wal', '-shm']) rmSync(tmp + ext, { force: true });
  const store = EmbeddedDatabase.openFile(tmp);
  const notes: string[] = [];
  let out: Omit<Migration, 'keptIn' | 'notes'>;
  try {
    out = store.writeSync(() => {
      const ids = copySchemas(store, join(dir, 'schemas'));
      const records = copyTopics(store, join(dir, SEGMENT_TOPICS_DIR), ids, notes);
      const { ledger, reissues } = copyLedger(store, join(dir, 'ledger'));
      // The run rows, folded from the records just copied, in the same transaction.
      new RunRows(store).catchUp(Number.POSITIVE_INFINITY);
      return { records, schemas: ids.size, ledger, reissues };
    });
  } finally {
    store.close();
  }
  renameSync(tmp, join(dir, DB_FILE));
  const keptIn = join(dir, 'segment-log');
  mkdirSync(keptIn, { recursive: true });
  for (const name of OLD) if (existsSync(join(dir, name))) renameSync(join(dir, name), join(keptIn, name));
  return { ...out, notes, keptIn };
}

/** The segment log had one writer per topic, holding a pid lock: a live one would keep writing there. */
function liveWriters(dir: string): void {
  for (const topic of readdirSync(join(dir, SEGMENT_TOPICS_DIR))) {
    const lock = join(dir, SEGMENT_TOPICS_DIR, topic, 'writer.lock');
    if (!existsSync(lock)) continue;
    const pid = Number.parseInt(readFileSync(lock, 'utf8'), 10);
    if (Number.isNaN(pid) || !processAlive(pid)) continue;
    throw refuse(`process ${pid} still writes ${topic} in ${dir} (${lock}); stop it, then migrate`);
  }
}

/** Schema ids as the file store minted them. An id no by-hash file names lost a race and no record uses it. */
function copySchemas(store: EmbeddedDatabase, dir: string): Set<number> {
  const ids = new Set<number>();
  if (!existsSync(dir)) return ids;
  const insert = store.db.prepare('INSERT INTO schemas (id, hash, schema) VALUES (?, ?, ?)');
  for (const hash of readdirSync(join(dir, 'by-hash')).sort()) {
    const id = Number(readFileSync(join(dir, 'by-hash', hash), 'utf8'));
    const text = readFileSync(join(dir, 'ids', `${id}.json`), 'utf8');
    if (createHash('sha256').update(text).digest('hex') !== hash)
      throw refuse(`${join(dir, 'ids', `${id}.json`)} does not hold the schema its by-hash entry names`);
    insert.run(id, hash, text);
    ids.add(id);
  }
  const subjects = store.db.prepare('INSERT OR IGNORE INTO subjects (subject, id) VALUES (?, ?)');
  const subjectsDir = join(dir, 'subjects');
  if (existsSync(subjectsDir))
    for (const s of readdirSync(subjectsDir))
      for (const id of readdirSync(join(subjectsDir, s)).map(Number))
        if (ids.has(id)) subjects.run(decodeURIComponent(s), id);
  return ids;
}

function copyTopics(
  store: EmbeddedDatabase,
  dir: string,
  schemaIds: ReadonlySet<number>,
  notes: string[],
): Record<string, number> {
  const insert = store.db.prepare(
    'INSERT INTO records (topic, topic_offset, key, run_id, seq, at_ms, headers, value) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const out: Record<string, number> = {};
  for (const topic of readdirSync(dir).sort()) {
    const tdir = join(dir, topic);
    const seqs = new Map<string, number>();
    let next = 0;
    const segments = readdirSync(tdir)
      .filter((n) => n.endsWith('.seg'))
      .sort();
    for (const [i, name] of segments.entries()) {
      const path = join(tdir, name);
      if (Number.parseInt(name, 10) !== next)
        throw refuse(
          `${path}: starts at offset ${Number.parseInt(name, 10)}, expected ${next} (a segment is missing)`,
        );
      const buf = readFileSync(path);
      const scan = scanRecords(buf, next);
      if (scan.tail === 'corrupt' || (scan.tail === 'torn' && i < segments.length - 1))
        throw refuse(`${path} at byte ${scan.validEnd}: ${scan.reason ?? scan.tail}; nothing was changed`);
      if (scan.tail === 'torn')
        notes.push(
          `${path}: a torn last record at byte ${scan.validEnd} (a write a crash cut short, never acknowledged) was left out`,
        );
      for (const p of scan.positions) {
        const { record: r } = decodeRecord(topic, buf, p);
        const schemaId = r.value.length >= 5 && r.value[0] === 0 ? r.value.readInt32BE(1) : null;
        if (schemaId !== null && schemaIds.size > 0 && !schemaIds.has(schemaId))
          throw refuse(
            `${path}: offset ${r.offset} is framed with schema id ${schemaId}, which the schema store does not hold`,
          );
        const seq = (seqs.get(r.key) ?? 0) + 1;
        seqs.set(r.key, seq);
        const isRun = topic === TOPICS.runs;
        const headers = r.headers === undefined ? null : JSON.stringify(r.headers);
        insert.run(topic, r.offset, r.key, isRun ? r.key : null, isRun ? seq : null, 0, headers, r.value);
        next++;
      }
    }
    out[topic] = next;
  }
  return out;
}

interface ClaimFile {
  readonly key: string;
  readonly pid: number;
  readonly state: {
    readonly status: 'claimed' | 'completed' | 'in_doubt';
    readonly owner: { readonly runId: string; readonly callId: string };
    readonly resultJson?: string;
    readonly reason?: string;
  };
}

function copyLedger(store: EmbeddedDatabase, dir: string): { ledger: number; reissues: number } {
  if (!existsSync(dir)) return { ledger: 0, reissues: 0 };
  const entry = store.db.prepare(
    'INSERT INTO ledger (operation_key, status, run_id, call_id, pid, result_json, reason, at_ms) VALUES (?, ?, ?, ?, ?, ?, ?, 0)',
  );
  const note = store.db.prepare('INSERT INTO reissues (new_key, old_key, note) VALUES (?, ?, ?)');
  let ledger = 0;
  let reissues = 0;
  // Only the published files: `.claim` and `.tmp` files are writes that never took effect.
  for (const name of readdirSync(dir).sort()) {
    if (!name.endsWith('.json')) continue;
    const data = JSON.parse(readFileSync(join(dir, name), 'utf8'));
    if (name.endsWith('.reissue.json')) {
      note.run(data.newKey, data.oldKey, JSON.stringify(data));
      reissues++;
      continue;
    }
    const { key, pid, state } = data as ClaimFile;
    const { status, owner } = state;
    entry.run(key, status, owner.runId, owner.callId, pid, state.resultJson ?? null, state.reason ?? null);
    ledger++;
  }
  return { ledger, reissues };
}
