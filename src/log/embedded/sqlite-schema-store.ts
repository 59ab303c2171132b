/**
 * The embedded schema store: the `schemas` and `subjects` tables of the data dir's database.
 * Ids are global and dense from 1, and the same normalized text always gets the same id
 * (`hash` is UNIQUE, and a registration is one write transaction), whichever process registers
 * it first: the contract of a Confluent registry, so a record's framing means the same here and
 * on Kafka.
 */
import { createHash } from 'node:crypto';
import { normalizeSchema, type SchemaStore, unknownSchema } from '../../events/schema-store.js';
import { EmbeddedDatabase } from './database.js';

/** What a read-only store answers for a schema it does not hold: no real id is 0. */
export const NOT_REGISTERED = 0;

export class SqliteSchemaStore implements SchemaStore {
  private readonly cache = new Map<number, string>();
  private store: EmbeddedDatabase | undefined;

  /**
   * The store of the database in `dataDir`, opened on first use. `readOnly`: nothing is ever
   * written; `register` then only looks a schema up and answers NOT_REGISTERED for one that is not
   * there (a reader decodes by the ids in the records and never encodes with its own).
   */
  constructor(
    private readonly dataDir: string,
    private readonly opts: { readonly readOnly?: boolean; readonly fsync?: 'batch' | 'none' } = {},
  ) {}

  async register(subject: string, schema: string): Promise<number> {
    const text = normalizeSchema(schema);
    const hash = createHash('sha256').update(text).digest('hex');
    const s = this.open();
    const byHash = s.db.prepare('SELECT id FROM schemas WHERE hash = ?');
    if (s.readOnly) {
      const row = s.read(() => byHash.get(hash)) as { id: number } | undefined;
      return row?.id ?? NOT_REGISTERED;
    }
    const id = await s.write(() => {
      const found = byHash.get(hash) as { id: number } | undefined;
      const got =
        found?.id ??
        Number(
          s.db.prepare('INSERT INTO schemas (hash, schema) VALUES (?, ?)').run(hash, text).lastInsertRowid,
        );
      s.db.prepare('INSERT OR IGNORE INTO subjects (subject, id) VALUES (?, ?)').run(subject, got);
      return got;
    });
    this.cache.set(id, text);
    return id;
  }

  async schemaById(id: number): Promise<string> {
    const hit = this.cache.get(id);
    if (hit !== undefined) return hit;
    const s = this.open();
    const row = s.read(() => s.db.prepare('SELECT schema FROM schemas WHERE id = ?').get(id)) as
      | { schema: string }
      | undefined;
    if (row === undefined) throw unknownSchema(id);
    this.cache.set(id, row.schema);
    return row.schema;
  }

  /** Ids registered under a subject, oldest first. */
  async versions(subject: string): Promise<number[]> {
    const s = this.open();
    const rows = s.read(() =>
      s.db.prepare('SELECT id FROM subjects WHERE subject = ? ORDER BY id').all(subject),
    ) as { id: number }[];
    return rows.map((r) => r.id);
  }

  async close(): Promise<void> {
    this.store?.close();
    this.store = undefined;
  }

  private open(): EmbeddedDatabase {
    this.store ??= EmbeddedDatabase.open(this.dataDir, {
      readOnly: this.opts.readOnly ?? false,
      synchronous: this.opts.fsync === 'none' ? 'off' : 'full',
    });
    return this.store;
  }
}
