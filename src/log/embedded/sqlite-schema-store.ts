/**
 * The embedded schema store: the `schemas` and `subjects` tables of the data dir's database. Ids
 * are global and dense from 1, and the same normalized text always gets the same id (`hash` is
 * UNIQUE; a registration is one write transaction): a Confluent registry's contract, so a record's
 * framing means the same here and on Kafka.
 */
import { createHash } from 'node:crypto';
import { normalizeSchema, type SchemaStore, unknownSchema } from '../../ports/schema-store.js';
import { EmbeddedDatabase } from './database.js';

/** What a read-only store answers for a schema it does not hold: no real id is 0. */
const NOT_REGISTERED = 0;

export class SqliteSchemaStore implements SchemaStore {
  private readonly cache = new Map<number, string>();

  /**
   * The store of the database in `dataDir`. It is asked a few times per process (answers are
   * cached), so each question opens the database and closes it again. `readOnly`: `register` only
   * looks a schema up, NOT_REGISTERED when it is not there (a reader never encodes with its own).
   */
  constructor(
    private readonly dataDir: string,
    private readonly opts: { readonly readOnly?: boolean; readonly fsync?: 'batch' | 'none' } = {},
  ) {}

  async register(subject: string, schema: string): Promise<number> {
    const text = normalizeSchema(schema);
    const hash = createHash('sha256').update(text).digest('hex');
    const id = await this.with((s) => {
      const byHash = s.db.prepare('SELECT id FROM schemas WHERE hash = ?');
      if (s.readOnly) {
        const row = s.read(() => byHash.get(hash)) as { id: number } | undefined;
        return Promise.resolve(row?.id ?? NOT_REGISTERED);
      }
      return s.write(() => {
        const found = byHash.get(hash) as { id: number } | undefined;
        const got =
          found?.id ??
          Number(
            s.db.prepare('INSERT INTO schemas (hash, schema) VALUES (?, ?)').run(hash, text).lastInsertRowid,
          );
        s.db.prepare('INSERT OR IGNORE INTO subjects (subject, id) VALUES (?, ?)').run(subject, got);
        return got;
      });
    });
    if (id !== NOT_REGISTERED) this.cache.set(id, text);
    return id;
  }

  async schemaById(id: number): Promise<string> {
    const hit = this.cache.get(id);
    if (hit !== undefined) return hit;
    const row = (await this.with(async (s) =>
      s.read(() => s.db.prepare('SELECT schema FROM schemas WHERE id = ?').get(id)),
    )) as { schema: string } | undefined;
    if (row === undefined) throw unknownSchema(id);
    this.cache.set(id, row.schema);
    return row.schema;
  }

  /** Ids registered under a subject, oldest first. */
  async versions(subject: string): Promise<number[]> {
    const rows = (await this.with(async (s) =>
      s.read(() => s.db.prepare('SELECT id FROM subjects WHERE subject = ? ORDER BY id').all(subject)),
    )) as { id: number }[];
    return rows.map((r) => r.id);
  }

  /** Nothing is held open between questions; kept so that a store is closed like the others. */
  async close(): Promise<void> {}

  private async with<T>(fn: (s: EmbeddedDatabase) => Promise<T>): Promise<T> {
    const s = EmbeddedDatabase.open(this.dataDir, this.opts);
    try {
      return await fn(s);
    } finally {
      s.close();
    }
  }
}
