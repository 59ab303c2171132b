/**
 * The service's own records (requests and decisions): Confluent-framed Avro through the one
 * record codec (events/record-codec.ts), their schemas in `schemas/service/`.
 */
import { readFileSync } from 'node:fs';
import type { Schema } from 'avsc';
import { defaultSchemasDir } from '../events/envelope-schema.js';
import { RecordCodec } from '../events/record-codec.js';
import type { SchemaStore } from '../ports/schema-store.js';

/** The schema files of the service, in `schemas/service/`. */
export const SERVICE_SCHEMAS = {
  request: 'request.avsc',
  decision: 'decision.avsc',
} as const;

export function serviceSchemaText(file: string): string {
  return readFileSync(`${defaultSchemasDir()}service/${file}`, 'utf8');
}

export type ServiceCodec<T> = RecordCodec<T>;

export const ServiceCodec = {
  /** The codec of schema file `file`, registered under `subject`. */
  create: <T>(store: SchemaStore, subject: string, file: string): Promise<ServiceCodec<T>> =>
    RecordCodec.register<T>(store, subject, JSON.parse(serviceSchemaText(file)) as Schema),
};
