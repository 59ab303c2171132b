/**
 * Upcasters turn an older event shape into the current one after Avro resolution has done what
 * it can (added fields with defaults, dropped removed ones). They cover what resolution cannot:
 * a renamed event type, a field whose meaning changed, a value derived from other fields.
 */
import type { WireEnvelope, WireFields } from './serde.js';

export interface UpcastContext {
  /** Id of the schema the record was written with. */
  readonly writerSchemaId: number;
  /** Id of the schema the codec writes now; equal to writerSchemaId for current records. */
  readonly readerSchemaId: number;
}

export interface Upcaster {
  /** Event type (envelope `type`) this upcaster rewrites. */
  readonly type: string;
  /** Whether the record needs rewriting; typically a test on the writer schema id or on a field. */
  readonly applies: (fields: Readonly<WireFields>, ctx: UpcastContext) => boolean;
  /** The rewritten event: possibly another type, with fields in that type's current shape. */
  readonly up: (fields: Readonly<WireFields>, ctx: UpcastContext) => { type: string; fields: WireFields };
}

/** Applies upcasters in order, each at most once, so a chain v1 -> v2 -> v3 is a list. */
export function upcast(env: WireEnvelope, upcasters: readonly Upcaster[], ctx: UpcastContext): WireEnvelope {
  let type = env.type;
  let [branch, fields] = Object.entries(env.payload)[0] ?? ['', {}];
  let changed = false;
  for (const u of upcasters) {
    if (u.type !== type || !u.applies(fields, ctx)) continue;
    const next = u.up(fields, ctx);
    branch = branch.slice(0, branch.length - type.length) + next.type;
    type = next.type;
    fields = next.fields;
    changed = true;
  }
  return changed ? { ...env, type, payload: { [branch]: fields } } : env;
}
