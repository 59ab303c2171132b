/**
 * Where schema ids come from: a Confluent registry in Kafka mode, a table of the data dir's
 * database in embedded mode. Ids are global (not per subject), and the same schema text always
 * gets the same id, whatever subject registers it.
 */
import { LoopguardError } from '../domain/errors.js';

export interface SchemaStore {
  /** Registers `schema` (JSON text) under `subject`; resolves to its global id. */
  register(subject: string, schema: string): Promise<number>;
  /** The schema text with this id; rejects with code `unknown_schema` if there is none. */
  schemaById(id: number): Promise<string>;
}

/** Whitespace and key layout differences must not mint a new id for the same schema. */
export function normalizeSchema(schema: string): string {
  try {
    return JSON.stringify(JSON.parse(schema));
  } catch (e) {
    throw new LoopguardError('bad_schema', `schema is not JSON: ${(e as Error).message}`, { cause: e });
  }
}

export const unknownSchema = (id: number): LoopguardError =>
  new LoopguardError('unknown_schema', `no schema with id ${id}`, { details: { schemaId: id } });
