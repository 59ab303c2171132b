/**
 * Whether a result reports a failure, read off its structure first: the result class the caller
 * gave (RETRYABLE, PRECONDITION, FATAL), an envelope's error member or false `ok`/`success` flag,
 * a non-zero exit status in an envelope or in markup. Plain text is read for the markers that
 * runtimes print whatever the tool (`Error:` at its start, `SomeError:`, a traceback, `exit code 1`).
 * Used for one rule only: the same failure returned three times since anything changed (see
 * repeated-failure.ts); a failure missed here is still caught by the repeat rules.
 */

import { jsonInside, jsonValue } from './json-value.js';

const STATUS_KEYS: ReadonlySet<string> = new Set(['exitcode', 'returncode', 'exitstatus', 'rc']);
const FLAG_KEYS: ReadonlySet<string> = new Set(['ok', 'success', 'succeeded']);
const ERROR_KEYS: ReadonlySet<string> = new Set(['error', 'errors', 'exception']);
const key = (k: string) => k.toLowerCase().replace(/[^a-z]/g, '');

const LEADING = /^\s*(?:error|fatal|exception)\b\s*[:\-[(]/i;
const MARKERS =
  /\b[A-Z]\w*(?:Error|Exception):|Traceback \(most recent call last\)|\bexit (?:code|status):? [1-9]/;
const MARKUP_STATUS = /<(returncode|exit_?code|exit_?status)>\s*([0-9]+)\s*<\/\1>/i;
const MARKUP_ERROR = /<(error|exception)\b[^>]*>\s*[^<\s]/i;

function textFailed(t: string): boolean {
  const status = MARKUP_STATUS.exec(t);
  if (status !== null) return status[2] !== '0';
  return LEADING.test(t) || MARKERS.test(t) || MARKUP_ERROR.test(t);
}

function valueFailed(v: unknown, depth: number): boolean {
  if (typeof v === 'string') {
    const t = v.trim();
    const inner = jsonInside(t, depth);
    return inner === null ? textFailed(t) : valueFailed(inner, depth + 1);
  }
  if (typeof v !== 'object' || v === null || depth > 3) return false;
  if (Array.isArray(v)) return false;
  for (const [k, x] of Object.entries(v)) {
    const name = key(k);
    if (STATUS_KEYS.has(name) && typeof x === 'number') return x !== 0;
    if (FLAG_KEYS.has(name) && x === false) return true;
    if (
      ERROR_KEYS.has(name) &&
      x !== null &&
      x !== '' &&
      x !== false &&
      !(Array.isArray(x) && x.length === 0)
    )
      return true;
  }
  // An envelope's text fields (stdout, output, message) may carry the runtime's own markers.
  return Object.values(v).some((x) => typeof x === 'string' && valueFailed(x, depth + 1));
}

export function isFailedResult(kind: string, resultJson: string): boolean {
  if (kind === 'RETRYABLE' || kind === 'PRECONDITION' || kind === 'FATAL') return true;
  if (kind === 'PENDING') return false;
  return valueFailed(jsonValue(resultJson, resultJson), 0);
}
