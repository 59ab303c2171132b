/**
 * Confluent-framed Avro for the service's own records (requests and decisions), with the schema
 * registered under `<topic>-value` like every other loopguard record, so a client in any language
 * with a Confluent serializer reads and writes the same bytes. A value written with an older
 * schema is read through an avsc resolver onto the current one (BACKWARD evolution).
 */
import { readFileSync } from 'node:fs';
import avsc, { type Resolver, type Schema, type Type } from 'avsc';
import { InvalidInputError, LoopguardError, toLoopguardError } from '../domain/errors.js';
import { AVRO_OPTS, defaultSchemasDir, typeFromJson } from '../events/envelope-schema.js';
import { frame, unframe } from '../events/wire.js';
import type { SchemaStore } from '../ports/schema-store.js';

/** The schema files of the service, in `schemas/service/`. */
export const SERVICE_SCHEMAS = {
  request: 'request.avsc',
  decision: 'decision.avsc',
} as const;

export function serviceSchemaText(file: string): string {
  return readFileSync(`${defaultSchemasDir()}service/${file}`, 'utf8');
}

export class ServiceCodec<T> {
  private readonly readings = new Map<number, Promise<Resolver | null>>();

  private constructor(
    private readonly store: SchemaStore,
    private readonly type: Type,
    readonly schemaId: number,
  ) {
    this.readings.set(schemaId, Promise.resolve(null));
  }

  static async create<T>(store: SchemaStore, subject: string, file: string): Promise<ServiceCodec<T>> {
    const text = serviceSchemaText(file);
    const type = avsc.Type.forSchema(JSON.parse(text) as Schema, { ...AVRO_OPTS });
    const id = await store.register(subject, JSON.stringify(type.schema({ exportAttrs: true })));
    return new ServiceCodec<T>(store, type, id);
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

  /** Errors: `truncated`, `bad_magic`, `unknown_schema`, `bad_payload` (all with a code, never a crash). */
  async decode(buf: Buffer): Promise<T> {
    const { schemaId, body } = unframe(buf);
    const reading = await this.reading(schemaId);
    try {
      return this.type.fromBuffer(body, reading ?? undefined) as T;
    } catch (e) {
      throw new LoopguardError(
        'bad_payload',
        `cannot decode Avro body (schema ${schemaId}): ${(e as Error).message}`,
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
