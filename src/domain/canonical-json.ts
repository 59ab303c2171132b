import type { CodeOf } from './error-codes.js';
import { err, InvalidInputError, LoopguardError, ok, type Result } from './errors.js';
import { MAX_DEPTH, MAX_JSON_CHARS, put } from './input-check.js';
import { type Hashing, isSecretKey, redactedMark, redactText } from './redact.js';

/** How a value is made canonical: arguments are trimmed and lose volatile fields, results are kept as given. */
export interface CanonicalRules {
  readonly hashing: Hashing;
  readonly trim: boolean;
  /** Key names dropped at every depth (volatile fields); none for results. */
  readonly drop: (key: string) => boolean;
  /** The code of a value that is not JSON: `invalid_args`, `invalid_result`. */
  readonly invalid: CodeOf<'invalid_input'>;
}

/** Thrown from deep in the walk, and made an error value (a Result) at its top. */
class Bad extends Error {
  constructor(
    readonly code: CodeOf<'invalid_input'>,
    readonly path: string,
    readonly why: string,
  ) {
    super(`${path}: ${why}`);
  }
}

const pathOf = (at: string, key: string | number | null): string =>
  key === null ? at : typeof key === 'number' ? `${at}[${key}]` : `${at}.${key}`;

interface Walk {
  readonly rules: CanonicalRules;
  readonly ancestors: Set<object>;
}

function walk(value: unknown, at: string, key: string | number | null, depth: number, w: Walk): unknown {
  switch (typeof value) {
    case 'string': {
      const s = w.rules.trim ? value.trim() : value;
      return redactText(s, w.rules.hashing);
    }
    case 'boolean':
      return value;
    case 'number':
      if (!Number.isFinite(value))
        throw new Bad(w.rules.invalid, pathOf(at, key), `${value} is not a JSON number`);
      return Object.is(value, -0) ? 0 : value;
    case 'bigint':
      throw new Bad(w.rules.invalid, pathOf(at, key), 'BigInt is not JSON (pass it as a string)');
    case 'function':
    case 'symbol':
    case 'undefined':
      throw new Bad(w.rules.invalid, pathOf(at, key), `${typeof value} is not JSON`);
  }
  if (value === null) return null;
  const obj = value as object;
  const path = pathOf(at, key);
  if (depth >= MAX_DEPTH) throw new Bad('too_deep', path, `nested deeper than ${MAX_DEPTH} levels`);
  if (w.ancestors.has(obj)) throw new Bad(w.rules.invalid, path, 'circular reference');
  if (typeof (obj as { toJSON?: unknown }).toJSON === 'function') {
    // One level deeper each time, so a toJSON that returns itself ends at the depth limit.
    return walk((obj as { toJSON: () => unknown }).toJSON(), path, null, depth + 1, w);
  }
  w.ancestors.add(obj);
  try {
    if (Array.isArray(obj)) return obj.map((v, i) => walk(v, path, i, depth + 1, w));
    const proto = Object.getPrototypeOf(obj);
    if (proto !== Object.prototype && proto !== null)
      throw new Bad(w.rules.invalid, path, `a ${proto?.constructor?.name ?? 'class'} instance is not JSON`);
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(obj).sort()) {
      const v = (obj as Record<string, unknown>)[k];
      // JSON drops undefined members; so do we, instead of failing on an optional field left unset.
      if (v === undefined || w.rules.drop(k)) continue;
      const c = walk(v, path, k, depth + 1, w);
      // A key "__proto__" is kept as data, not taken as the object's prototype.
      put(out, k, isSecretKey(k) ? redactedMark(JSON.stringify(c), w.rules.hashing) : c);
    }
    return out;
  } finally {
    w.ancestors.delete(obj);
  }
}

export interface Canonical {
  readonly value: unknown;
  readonly json: string;
}

/**
 * A JSON value made canonical and safe to record: keys sorted at every depth, secrets redacted
 * (by key name and by value shape), within the depth and size limits. Every problem is an error
 * naming the value's path (`args.items[2].q`): `rules.invalid`, `too_deep` or `too_large`.
 */
export function canonicalJson(value: unknown, root: string, rules: CanonicalRules): Result<Canonical> {
  try {
    const v = walk(value, root, null, 0, { rules, ancestors: new Set() });
    const json = JSON.stringify(v);
    if (json.length > MAX_JSON_CHARS)
      return err(
        new LoopguardError(
          'too_large',
          `${root}: ${json.length} characters of JSON, more than ${MAX_JSON_CHARS}`,
          {
            details: { field: root },
          },
        ),
      );
    return ok({ value: v, json });
  } catch (e) {
    if (e instanceof Bad) return err(new InvalidInputError(e.code, e.path, e.message));
    throw e;
  }
}

/**
 * A tool's result as it is recorded (a side effect's result is kept, to hand back cached):
 * canonical like arguments, but strings are kept as they are and no field is dropped.
 */
export function resultJsonOf(value: unknown, hashing: Hashing): Result<Canonical> {
  return canonicalJson(value ?? null, 'result', {
    hashing,
    trim: false,
    drop: () => false,
    invalid: 'invalid_result',
  });
}
