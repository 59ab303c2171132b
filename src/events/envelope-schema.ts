/**
 * Assembles the envelope type from the `.avsc` files in `schemas/`, so those files, and nothing
 * else, define what goes on the wire. Each file holds one named record; records may refer to
 * records of other files by full name, so files are parsed until every reference resolves.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import avsc, { type Resolver, type Schema, type Type } from 'avsc';
import { LoopguardError } from '../domain/errors.js';

export const NAMESPACE = 'io.loopguard.events';
export const ENVELOPE_NAME = `${NAMESPACE}.Envelope`;

/** Every reader and writer type must be built with the same union representation. */
export const AVRO_OPTS = { wrapUnions: 'auto' } as const;

/** `schemas/` at the repo root, found from both `src/events` (tsx) and `dist/src/events` (build). */
export function defaultSchemasDir(): string {
  for (const rel of ['../../schemas/', '../../../schemas/']) {
    const dir = fileURLToPath(new URL(rel, import.meta.url));
    if (existsSync(`${dir}envelope.avsc`)) return dir;
  }
  throw new LoopguardError('schemas_missing', 'schemas/envelope.avsc not found next to src/ or dist/');
}

export interface LoadedSchemas {
  readonly envelope: Type;
  /** Named types by full name (io.loopguard.events.RunStarted, ...). */
  readonly registry: Readonly<Record<string, Type>>;
  /** Self-contained envelope schema with docs: the text registered under `<topic>-value`. */
  readonly json: string;
}

const cache = new Map<string, LoadedSchemas>();

export function loadSchemas(dir: string = defaultSchemasDir()): LoadedSchemas {
  const hit = cache.get(dir);
  if (hit !== undefined) return hit;
  const sources = readdirSync(dir)
    .filter((f) => f.endsWith('.avsc'))
    .sort()
    .map((f) => ({ file: f, schema: JSON.parse(readFileSync(`${dir}/${f}`, 'utf8')) as Schema }));
  const registry: Record<string, Type> = {};
  let pending = sources;
  while (pending.length > 0) {
    const failed: typeof pending = [];
    const errors: string[] = [];
    for (const src of pending) {
      // A failed parse may leave half-registered names behind, so each attempt gets a copy.
      const attempt = { ...registry };
      try {
        avsc.Type.forSchema(src.schema, { ...AVRO_OPTS, registry: attempt });
        Object.assign(registry, attempt);
      } catch (e) {
        failed.push(src);
        errors.push(`${src.file}: ${(e as Error).message}`);
      }
    }
    if (failed.length === pending.length) {
      throw new LoopguardError('schemas_invalid', `cannot assemble schemas: ${errors.join('; ')}`);
    }
    pending = failed;
  }
  const envelope = registry[ENVELOPE_NAME];
  if (envelope === undefined) throw new LoopguardError('schemas_invalid', `${ENVELOPE_NAME} not defined`);
  const json = JSON.stringify(envelope.schema({ exportAttrs: true }));
  const loaded = { envelope, registry, json };
  cache.set(dir, loaded);
  return loaded;
}

/** Builds a type from a registered (self-contained) schema text, e.g. an older writer's. */
export function typeFromJson(json: string): Type {
  return avsc.Type.forSchema(JSON.parse(json) as Schema, { ...AVRO_OPTS });
}

/**
 * How records of writer schema `schemaId` (its text) are read as `type`: refused as
 * `incompatible_schema` when they cannot be, by every codec alike.
 */
export function resolverOf(type: Type, schemaId: number, text: string): Resolver {
  try {
    return type.createResolver(typeFromJson(text));
  } catch (e) {
    throw new LoopguardError(
      'incompatible_schema',
      `schema ${schemaId} cannot be read as current: ${(e as Error).message}`,
      { cause: e, details: { schemaId } },
    );
  }
}
