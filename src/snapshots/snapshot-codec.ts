/**
 * Confluent-framed Avro for the records of both snapshot strategies, with the schema registered
 * under `<snapshots topic>-value` like every other loopguard record. A record written with an
 * older schema is read through an avsc resolver onto the current one (BACKWARD evolution). What
 * a record carries of a run is a stored run snapshot (machine-snapshot.ts).
 */
import avsc, { type Resolver, type Schema, type Type } from 'avsc';
import { LoopguardError, toLoopguardError } from '../domain/errors.js';
import { AVRO_OPTS, typeFromJson } from '../events/envelope-schema.js';
import { frame, unframe } from '../events/wire.js';
import type { SchemaStore } from '../ports/schema-store.js';

export class SnapshotCodec<W> {
  private readonly readings = new Map<number, Promise<Resolver | null>>();

  private constructor(
    private readonly store: SchemaStore,
    private readonly type: Type,
    private readonly schemaId: number,
  ) {
    this.readings.set(schemaId, Promise.resolve(null));
  }

  static async create<W>(store: SchemaStore, subject: string, schema: Schema): Promise<SnapshotCodec<W>> {
    const type = avsc.Type.forSchema(schema, { ...AVRO_OPTS });
    const id = await store.register(subject, JSON.stringify(type.schema({ exportAttrs: true })));
    return new SnapshotCodec<W>(store, type, id);
  }

  encode(record: W): Buffer {
    return frame(this.schemaId, this.type.toBuffer(record));
  }

  /** Errors: the framing's codes, `schema_store_unavailable`, `bad_snapshot` for a body that does not decode. */
  async decode(buf: Buffer): Promise<W> {
    const { schemaId, body } = unframe(buf);
    const reading = await this.reading(schemaId);
    try {
      return this.type.fromBuffer(body, reading ?? undefined) as W;
    } catch (e) {
      throw new LoopguardError(
        'bad_snapshot',
        `snapshot record (schema ${schemaId}): ${(e as Error).message}`,
        {
          cause: e,
          details: { schemaId },
        },
      );
    }
  }

  private reading(schemaId: number): Promise<Resolver | null> {
    let r = this.readings.get(schemaId);
    if (r === undefined) {
      r = this.store.schemaById(schemaId).then(
        (text) => this.type.createResolver(typeFromJson(text)),
        (e: unknown) => {
          throw toLoopguardError(e, 'schema_store_unavailable');
        },
      );
      this.readings.set(schemaId, r);
      r.catch(() => this.readings.delete(schemaId));
    }
    return r;
  }
}
