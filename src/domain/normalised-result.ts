import { jsonInside, jsonValue } from './json-value.js';
import type { Hashing } from './redact.js';

/**
 * A result with its volatile parts masked, so that two answers that differ only in what changes
 * on every call (a counter or line number inside an error message, a timestamp, a duration, a
 * request id, a temporary path) compare equal. The guard judges news on this: an identical call
 * whose error differs each time only in its attempt counter is not learning anything. The raw
 * hash stays on the record for audit.
 *
 * What is kept, because it is what the answer says: numbers that are the whole content (a
 * calculator's `1023.0`), JSON number values (`{"balance": 120.5}`), numbers in a status element
 * (`<returncode>1</returncode>`), progress measures (`42%`, `12/40`), version strings (`1.2.3`),
 * item numbers (`#1041`), digits inside names (`test_case_3`, `utf8`), and number values of a
 * mapping printed in text (`DEBUG {'a': 2}`, `{"rows": 3}` after a prefix): printed data, as a
 * JSON number value is, whatever else in the line is the same.
 */

const UUID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;
const DATE_TIME =
  /\b\d{4}-\d{2}-\d{2}[T ]\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?(?![\w:])/g;
const CLOCK = /(?<![\w:.])\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?![\w:])/g;
const DURATION =
  /(?<![\w.])\d+(?:\.\d+)?\s?(?:ns|us|µs|ms|s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?)(?![\w%/])/g;
/** Seven or more hex digits holding both a digit and a letter: commit ids, object ids, request ids. */
const HEX = /\b(?:0x)?(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,}\b/gi;
/** Long tokens mixing letters and at least three digits (`req_8f3kd92ja71`): generated ids. */
const TOKEN_ID =
  /\b(?=[A-Za-z0-9_-]*\d[A-Za-z0-9_-]*\d[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{12,}\b/g;
const TEMP_PATH = /(?:\/private)?(?:\/var)?\/(?:tmp|folders)\/[^\s'"`,;)\]}]*/g;
/**
 * A standalone number: not part of a name, a version, a percentage, a fraction, an item number
 * (`#1041`) or a status element.
 */
const NUMBER = /(?<![\w.%/>#-])-?\d+(?:\.\d+)?(?![\w.%/])/g;
const LETTERS = /\p{L}{2}/u;
/** What precedes a mapping member's value: an open brace, then a quoted or bare key and a colon. */
const MEMBER_KEY = /\{(?:[^{}]*,)?\s*(?:'[^'{}]*'|"[^"{}]*"|[A-Za-z_][\w-]*)\s*:\s*$/;
/** What follows it: the next member or the closing brace. */
const MEMBER_END = /^\s*[,}]/;
/** How far back a member's key and its open brace are looked for. */
const MEMBER_REACH = 200;

/** The number at `at` is the value of a member of a mapping printed in the text. */
function memberValue(text: string, at: number, length: number): boolean {
  return (
    MEMBER_END.test(text.slice(at + length, at + length + 8)) &&
    MEMBER_KEY.test(text.slice(Math.max(0, at - MEMBER_REACH), at))
  );
}

/** NUMBER has no capture group, so a match's offset and text follow it directly. */
const maskNumber = (n: string, at: number, text: string): string =>
  memberValue(text, at, n.length) ? n : '<n>';

/** Masks the volatile parts of free text; text without letters is all content and is kept. */
export function maskedText(text: string): string {
  if (!LETTERS.test(text)) return text;
  const rest = text
    .replace(UUID, '<uuid>')
    .replace(DATE_TIME, '<time>')
    .replace(CLOCK, '<time>')
    .replace(TEMP_PATH, '<tmp>')
    .replace(HEX, '<hex>')
    .replace(TOKEN_ID, '<id>')
    .replace(DURATION, '<duration>');
  return text.includes('{') ? rest.replace(NUMBER, maskNumber) : rest.replace(NUMBER, '<n>');
}

interface Masking {
  changed: boolean;
}

/** Strings masked at every depth; numbers, booleans and keys kept. A string holding JSON is read as JSON. */
function masked(v: unknown, depth: number, m: Masking): unknown {
  if (typeof v === 'string') {
    const inner = jsonInside(v.trimStart(), depth);
    if (inner !== null) {
      const within: Masking = { changed: false };
      const out = masked(inner, depth + 1, within);
      if (!within.changed) return v;
      m.changed = true;
      return JSON.stringify(out);
    }
    const text = maskedText(v);
    if (text !== v) m.changed = true;
    return text;
  }
  if (Array.isArray(v)) return v.map((x) => masked(x, depth + 1, m));
  if (typeof v === 'object' && v !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v))
      Object.defineProperty(out, k, { value: masked(x, depth + 1, m), enumerable: true });
    return out;
  }
  return v;
}

/** The result JSON with its volatile parts masked (the very same text when there are none). */
export function normalisedResult(resultJson: string): string {
  const v = jsonValue(resultJson);
  if (v === undefined) return maskedText(resultJson);
  const m: Masking = { changed: false };
  const out = masked(v, 0, m);
  return m.changed ? JSON.stringify(out) : resultJson;
}

/**
 * The class a result is judged by: a digest of the masked result (with its kind and code, as the
 * raw hash has them), or null when masking changed nothing, in which case the raw hash is the class.
 */
export function resultClassOf(
  kind: string,
  code: string | null,
  resultJson: string,
  hashing: Hashing,
): string | null {
  const normal = normalisedResult(resultJson);
  if (normal === resultJson) return null;
  return `n:${hashing.digest(`${kind}:${code ?? ''}:${normal}`).slice(0, 40)}`;
}
