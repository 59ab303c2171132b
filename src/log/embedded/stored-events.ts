/**
 * The events of the embedded store's own runs records, decoded with the schemas its database
 * holds and without I/O of their own, so inside a write transaction: what the run list's keeper
 * (run-rows.ts) reads where an append did not hand over its events, or where it folds a run again.
 */
import { createHash } from 'node:crypto';
import type { StatementSync } from 'node:sqlite';
import type { RecordedEvent } from '../../domain/events.js';
import { EventCodec } from '../../events/codec.js';
import { loadSchemas } from '../../events/envelope-schema.js';
import { asBuffer } from '../../events/wire.js';
import { normalizeSchema } from '../../ports/schema-store.js';
import type { EmbeddedDatabase } from './database.js';

export class StoredEvents {
  private codec: EventCodec | undefined;
  private readonly schema: StatementSync;

  constructor(private readonly store: EmbeddedDatabase) {
    this.schema = store.db.prepare('SELECT schema FROM schemas WHERE id = ?');
  }

  /**
   * The event a runs record's value holds; undefined when this store cannot read it (a schema its
   * database does not hold, bytes no loopguard wrote, a schema this version cannot read).
   */
  read(value: Uint8Array): RecordedEvent | undefined {
    try {
      return this.reader().decodeSync(asBuffer(value));
    } catch {
      return undefined;
    }
  }

  /** Made on first use: by then the writers' EventStore has usually registered the current schema. */
  private reader(): EventCodec {
    if (this.codec !== undefined) return this.codec;
    const hash = createHash('sha256').update(normalizeSchema(loadSchemas().json)).digest('hex');
    const own = this.store.db.prepare('SELECT id FROM schemas WHERE hash = ?').get(hash) as
      | { id: number }
      | undefined;
    this.codec = EventCodec.reader(
      (id) => (this.schema.get(id) as { schema: string } | undefined)?.schema,
      own === undefined ? {} : { ownId: own.id },
    );
    return this.codec;
  }
}
