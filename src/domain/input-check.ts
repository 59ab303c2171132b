import type { CodeOf } from './error-codes.js';
import { InvalidInputError } from './errors.js';

/**
 * The one boundary check every input path shares: the CLI's trace reader, the library's run and
 * call arguments, tool outcomes, policies, and records read back from Kafka. Each check returns
 * the problem in words, or null; the caller names where it was (file:line:field, or the argument
 * path). Each limit is a value the encoder and the runtime can honour: past it a value would be
 * rounded, clamped or refused later, after something had already happened.
 */

/** avsc reads longs as JS numbers and refuses any above this, to rule out precision loss. */
export const MAX_LONG = 9_007_199_254_740_990;
/** avsc 5.7.9 zigzag-encodes negatives below -2^52 wrongly (they come back positive). */
export const MIN_LONG = -4_503_599_627_370_496;

/** Node clamps a timer above 2^31-1 ms to 1 ms: a longer step timeout would fire at once. */
export const MAX_TIMER_MS = 2_147_483_647;
/** The last instant a JS Date can hold: a later clock reading is not a time. */
const MAX_TIME_MS = 8_640_000_000_000_000;
/** Tokens of one call or one model turn; summed over a million calls it still fits a long. */
export const MAX_TOKENS = 2_147_483_647;
/** Dollars of one call or one model turn: far above any real one, and its sums stay finite. */
export const MAX_COST_USD = 1_000_000_000;

/** Nesting of arguments and results: deeper is not a tool call, and a recursive walk must stay on the stack. */
export const MAX_DEPTH = 64;
/** Canonical JSON of arguments or a recorded result: an event must fit a Kafka record (1 MB by default). */
export const MAX_JSON_CHARS = 256 * 1024;
/** Run ids, tool names, operation keys, result codes: names, not documents. */
export const MAX_NAME_CHARS = 1024;
/** Free text a caller records (reasons, gaps, details). */
export const MAX_TEXT_CHARS = 16 * 1024;

/**
 * Records keyed by what users name (tools, operation keys, task types) must never answer with what
 * every object inherits: `perTool["constructor"]` is a function and `asked["__proto__"]` is
 * Object.prototype. Reads go through `own`; writes by computed key or spread already define an
 * own property, and assignments go through `put`.
 */
export const own = <V>(rec: Readonly<Record<string, V>>, key: string): V | undefined =>
  Object.hasOwn(rec, key) ? rec[key] : undefined;

/**
 * Whether a record has any key. Most runs' per-fingerprint records are empty, and looking a
 * call's new fingerprint up in an object costs V8 a search of its string table the first time the
 * string is used as a key: an empty record is answered without it.
 */
export function hasKeys(rec: object): boolean {
  for (const _ in rec) return true;
  return false;
}

/**
 * Stores `value` under `key` as an own property: `rec["__proto__"] = v` would set the prototype
 * and drop the value. Plain objects stay plain (an object without a prototype is much slower to
 * build and to serialise, and this runs for every argument of every call).
 */
export function put<V>(rec: Record<string, V>, key: string, value: V): void {
  if (key === '__proto__')
    Object.defineProperty(rec, key, { value, enumerable: true, writable: true, configurable: true });
  else rec[key] = value;
}

export type Check = (v: unknown) => string | null;

export function inputError(code: CodeOf<'invalid_input'>, path: string, problem: string): InvalidInputError {
  return new InvalidInputError(code, path, `${path}: ${problem}`);
}

const shown = (v: unknown): string => {
  if (typeof v === 'number') return String(v);
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}...` : v);
  return v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v;
};

/**
 * Lone surrogates have no UTF-8 form: Avro writes them as U+FFFD, so two different names would
 * become one in the log.
 */
const LONE_SURROGATE = /\p{Cs}/u;
const wellFormed = (s: string): boolean => !LONE_SURROGATE.test(s);

/** A name: a run id, tool, operation key, task type, result code. Not blank, not huge, valid Unicode. */
export const nameProblem: Check = (v) => {
  if (v === undefined) return 'missing or not a non-empty string';
  if (typeof v !== 'string' || v.trim() === '') return `expected a non-empty string, got ${shown(v)}`;
  if (v.length > MAX_NAME_CHARS) return `longer than ${MAX_NAME_CHARS} characters`;
  if (!wellFormed(v)) return 'not valid Unicode (a lone surrogate has no UTF-8 form)';
  return null;
};

/** Free text a caller records: a reason, a gap, a detail. */
export const textProblem: Check = (v) => {
  if (typeof v !== 'string') return `expected a string, got ${shown(v)}`;
  if (v.length > MAX_TEXT_CHARS) return `longer than ${MAX_TEXT_CHARS} characters`;
  if (!wellFormed(v)) return 'not valid Unicode (a lone surrogate has no UTF-8 form)';
  return null;
};

const inRange =
  (max: number, integer: boolean): Check =>
  (v) =>
    typeof v === 'number' && (integer ? Number.isInteger(v) : Number.isFinite(v)) && v >= 0 && v <= max
      ? null
      : `expected ${integer ? 'an integer' : 'a number'} in [0, ${max}], got ${shown(v)}`;

export const booleanProblem: Check = (v) =>
  typeof v === 'boolean' ? null : `expected true or false, got ${shown(v)}`;

/** Each kind of number the guard records, with the range the encoder and the runtime honour. */
export const tokensProblem = inRange(MAX_TOKENS, true);
export const costProblem = inRange(MAX_COST_USD, false);
export const progressVersionProblem = inRange(MAX_LONG, true);
/** A wait the runtime can time with one timer. */
export const delayProblem = inRange(MAX_TIMER_MS, true);
export const timeProblem = inRange(MAX_TIME_MS, true);

/** One of `names`: a kind the guard has a policy for (from JS, where the types do not hold). */
export const oneOfProblem =
  (names: readonly string[]): Check =>
  (v) =>
    typeof v === 'string' && names.includes(v)
      ? null
      : `expected one of ${names.join(', ')}, got ${shown(v)}`;

export type FieldSpec = Readonly<Record<string, Check>>;

/** The first problem among the fields `spec` names; absent fields are fine (all are optional). */
export function fieldsProblem(
  obj: object,
  spec: FieldSpec,
  prefix: string,
): { readonly path: string; readonly problem: string } | null {
  // for-in, not Object.entries: no arrays made on each call's hot path (a spec is a plain literal).
  for (const field in spec) {
    const v = field in obj ? (obj as Record<string, unknown>)[field] : undefined;
    if (v === undefined) continue;
    const problem = (spec[field] as Check)(v);
    if (problem !== null) return { path: prefix ? `${prefix}.${field}` : field, problem };
  }
  return null;
}

/** A record of strings (run labels): names as keys, free text as values. */
const labelsProblem: Check = (v) => {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return `expected an object, got ${shown(v)}`;
  for (const [k, x] of Object.entries(v)) {
    const bad = nameProblem(k) ?? textProblem(x);
    if (bad !== null) return `${k}: ${bad}`;
  }
  return null;
};

/** A call as the library or a trace offers it, by the library's field names. */
export const CALL_FIELDS: FieldSpec = {
  operationKey: nameProblem,
  sideEffect: booleanProblem,
  costEstimateUsd: costProblem,
  progressVersion: progressVersionProblem,
  afterUserTurn: booleanProblem,
};

/** What a tool reports with its result. */
export const OUTCOME_FIELDS: FieldSpec = {
  code: nameProblem,
  retryAfterMs: delayProblem,
  progressVersion: progressVersionProblem,
  tokens: tokensProblem,
  costUsd: costProblem,
  terminal: booleanProblem,
};

export const MODEL_USAGE_FIELDS: FieldSpec = {
  tokensIn: tokensProblem,
  tokensOut: tokensProblem,
  costUsd: costProblem,
};

const RESUME_FIELDS: FieldSpec = { preconditionChange: textProblem, approvedBy: nameProblem };

/** An approved resume's note: what changed, and who approved it (a missing change is named, not skipped). */
export function resumeProblem(change: { preconditionChange?: unknown; approvedBy?: unknown } | undefined) {
  const note = { preconditionChange: change?.preconditionChange ?? null, approvedBy: change?.approvedBy };
  return fieldsProblem(note, RESUME_FIELDS, 'change');
}

export const START_FIELDS: FieldSpec = {
  runId: nameProblem,
  taskType: nameProblem,
  tenant: nameProblem,
  progressVersion: progressVersionProblem,
  meta: labelsProblem,
  parentRunId: nameProblem,
};
