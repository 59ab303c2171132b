/**
 * Confluent-framed Avro for loopguard's own records other than events (the service's requests
 * and decisions, both snapshot strategies' records), with the schema registered under
 * `<topic>-value` like every other record, so a client in any language with a Confluent
 * serializer reads and writes the same bytes. A value written with an older schema is read
 * through an avsc resolver onto the current one (BACKWARD evolution).
 */
import avsc, { type Resolver, type Schema, type Type } from 'avsc';
import { type ErrorCode, InvalidInputError, toLoopguardError } from '../domain/errors.js';
import type { SchemaStore } from '../ports/schema-store.js';
import { AVRO_OPTS, resolverOf } from './envelope-schema.js';
import { frame, undecodable, unframe } from './wire.js';

export class RecordCodec<T> {
  private readonly readings = new Map<number, Promise<Resolver | null>>();

  private constructor(
    private readonly store: SchemaStore,
    private readonly type: Type,
    readonly schemaId: number,
    /** The code of a body that does not decode. */
    private readonly undecodable: ErrorCode,
  ) {
    this.readings.set(schemaId, Promise.resolve(null));
  }

  /** Registers `schema` under `subject`; a body that does not decode is `undecodable` (default `bad_payload`). */
  static async register<T>(
    store: SchemaStore,
    subject: string,
    schema: Schema,
    undecodable: ErrorCode = 'bad_payload',
  ): Promise<RecordCodec<T>> {
    const type = avsc.Type.forSchema(schema, { ...AVRO_OPTS });
    const id = await store.register(subject, JSON.stringify(type.schema({ exportAttrs: true })));
    return new RecordCodec<T>(store, type, id, undecodable);
  }

  /** Rejects a value the schema does not allow with `bad_request`, naming the field. */
  encode(value: T): Buffer {
    const wrong: string[] = [];
    if (!this.type.isValid(value, { errorHook: (path) => wrong.push(path.join('.')) }))
      throw new InvalidInputError(
        'bad_request',
        wrong[0] ?? '?',
        `field ${wrong[0] ?? '?'} does not fit the Avro schema`,
      );
    return frame(this.schemaId, this.type.toBuffer(value));
  }

  /** Errors: `truncated`, `bad_magic`, `unknown_schema`, and the codec's code for a body that does not decode. */
  async decode(buf: Buffer): Promise<T> {
    const { schemaId, body } = unframe(buf);
    const reading = await this.reading(schemaId);
    try {
      return this.type.fromBuffer(body, reading ?? undefined) as T;
    } catch (e) {
      throw undecodable(this.undecodable, schemaId, e);
    }
  }

  private reading(schemaId: number): Promise<Resolver | null> {
    let r = this.readings.get(schemaId);
    if (r === undefined) {
      r = this.store.schemaById(schemaId).then(
        (text) => resolverOf(this.type, schemaId, text),
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
