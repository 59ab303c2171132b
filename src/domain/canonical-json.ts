import type { CodeOf } from './error-codes.js';
import { err, InvalidInputError, LoopguardError, ok, type Result } from './errors.js';
import { MAX_DEPTH, MAX_JSON_CHARS } from './input-check.js';
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

const INDEX = /^(?:0|[1-9][0-9]*)$/;
/** An array index: a key every object lists first, in numeric order. Most keys start with no digit. */
const isIndex = (k: string): boolean => {
  const c = k.charCodeAt(0);
  return c >= 48 && c <= 57 && INDEX.test(k) && Number(k) < 4294967295;
};

/**
 * The order the canonical JSON writes an object's keys in: sorted, except that array-index keys
 * come first in numeric order, as an object built in sorted order lists them (and as
 * `Object.keys` already gives them).
 */
function keyOrder(keys: string[]): readonly string[] {
  let n = 0;
  while (n < keys.length && isIndex(keys[n] as string)) n++;
  return n === 0 ? keys.sort() : [...keys.slice(0, n), ...keys.slice(n).sort()];
}

/**
 * The canonical JSON text of `value`, written as it is walked: what `JSON.stringify` gives for the
 * canonical value (sorted keys, trimmed and redacted strings, volatile fields dropped), without
 * building that value first (this runs for every argument of every call).
 */
function walk(value: unknown, at: string, key: string | number | null, depth: number, w: Walk): string {
  switch (typeof value) {
    case 'string': {
      const s = w.rules.trim ? value.trim() : value;
      return JSON.stringify(redactText(s, w.rules.hashing));
    }
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value))
        throw new Bad(w.rules.invalid, pathOf(at, key), `${value} is not a JSON number`);
      return JSON.stringify(Object.is(value, -0) ? 0 : value);
    case 'bigint':
      throw new Bad(w.rules.invalid, pathOf(at, key), 'BigInt is not JSON (pass it as a string)');
    case 'function':
    case 'symbol':
    case 'undefined':
      throw new Bad(w.rules.invalid, pathOf(at, key), `${typeof value} is not JSON`);
  }
  if (value === null) return 'null';
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
    if (Array.isArray(obj)) {
      let out = '[';
      // A hole in a sparse array is written null, as JSON.stringify writes it.
      for (let i = 0; i < obj.length; i++)
        out += `${i === 0 ? '' : ','}${i in obj ? walk(obj[i], path, i, depth + 1, w) : 'null'}`;
      return `${out}]`;
    }
    const proto = Object.getPrototypeOf(obj);
    if (proto !== Object.prototype && proto !== null)
      throw new Bad(w.rules.invalid, path, `a ${proto?.constructor?.name ?? 'class'} instance is not JSON`);
    let out = '{';
    for (const k of keyOrder(Object.keys(obj))) {
      const v = (obj as Record<string, unknown>)[k];
      // JSON drops undefined members; so do we, instead of failing on an optional field left unset.
      if (v === undefined || w.rules.drop(k)) continue;
      const c = walk(v, path, k, depth + 1, w);
      // A key "__proto__" is written as data like any other.
      out += `${out.length === 1 ? '' : ','}${JSON.stringify(k)}:${isSecretKey(k) ? JSON.stringify(redactedMark(c, w.rules.hashing)) : c}`;
    }
    return `${out}}`;
  } finally {
    w.ancestors.delete(obj);
  }
}

export interface Canonical {
  readonly json: string;
}

/**
 * A JSON value made canonical and safe to record: keys sorted at every depth, secrets redacted
 * (by key name and by value shape), within the depth and size limits. Every problem is an error
 * naming the value's path (`args.items[2].q`): `rules.invalid`, `too_deep` or `too_large`.
 */
export function canonicalJson(value: unknown, root: string, rules: CanonicalRules): Result<Canonical> {
  try {
    const json = walk(value, root, null, 0, { rules, ancestors: new Set() });
    if (json.length > MAX_JSON_CHARS)
      return err(
        new LoopguardError(
          'too_large',
          `${root}: ${json.length} characters of JSON, more than ${MAX_JSON_CHARS}`,
          { details: { field: root } },
        ),
      );
    return ok({ json });
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
