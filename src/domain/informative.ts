/**
 * Whether a result says anything, judged by its shape rather than by a list of harness wordings.
 * Edits, writes and `sed -i` answer with nothing, and harnesses wrap that nothing in markup or a
 * JSON envelope (`<returncode>0</returncode><output></output>`, `{"exit_code":0,"stdout":""}`):
 * what is left once tags, status codes, structure and punctuation are taken away is what was said.
 * A wrapper that carries words ("File written successfully.") is caught otherwise: it shares no
 * word with what was asked (`answersAsk` below), and unrelated calls get it alike (news.ts).
 */
import { jsonInside, jsonValue } from './json-value.js';

const EMPTY_WORDS =
  /^(ok|okay|done|success|succeeded|true|false|null|none|nil|undefined|saved|written|updated)?$/i;

/** Longer answers say something; shorter ones are cheap to look into. */
const JUDGED_LENGTH = 256;

/** An element holding only a number is a status code (`<returncode>0</returncode>`), not output. */
const STATUS_ELEMENTS = /<([A-Za-z][\w:-]*)[^>]*>\s*-?\d+\s*<\/\1>/g;
const TAGS = /<\/?[A-Za-z][\w:-]*[^>]*>/g;
const NOT_CONTENT = /[^\p{L}\p{N}]+/gu;

function saysNothing(text: string): boolean {
  return EMPTY_WORDS.test(text.replace(STATUS_ELEMENTS, ' ').replace(TAGS, ' ').replace(NOT_CONTENT, ''));
}

/** True when some part of the value says something. */
function says(v: unknown, depth: number): boolean {
  if (v === null || typeof v === 'boolean') return false;
  if (typeof v === 'number') return true;
  if (typeof v === 'string') {
    const t = v.trim();
    const inner = jsonInside(t, depth);
    return inner === null ? !saysNothing(t) : says(inner, depth + 1);
  }
  if (Array.isArray(v)) return v.some((x) => says(x, depth + 1));
  if (typeof v === 'object') {
    const fields = Object.values(v as object);
    // An envelope with text fields carries its output there; its numbers are status codes.
    const text = fields.some((x) => typeof x === 'string');
    return fields.some((x) => !(text && typeof x === 'number') && says(x, depth + 1));
  }
  return true;
}

/** Words of four or more letters, digits or underscores: names, paths, identifiers. */
const WORD = /[\p{L}\p{N}_]{4,}/gu;

function wordsOf(v: unknown, into: Set<string>): Set<string> {
  if (typeof v === 'string') for (const w of v.match(WORD) ?? []) into.add(w);
  else if (Array.isArray(v)) for (const x of v) wordsOf(x, into);
  else if (typeof v === 'object' && v !== null) for (const x of Object.values(v)) wordsOf(x, into);
  return into;
}

export function isInformative(resultJson: string): boolean {
  if (resultJson.length > JUDGED_LENGTH) return true;
  return says(jsonValue(resultJson, resultJson), 0);
}

/**
 * Whether the result is about the call it answers. A short answer that shares no word with the
 * call's arguments ("File written successfully." to a write of a script, "(no output)" to `sed -i`)
 * is about the harness, not about what was asked: two rephrasings answered with it have not shown
 * that they asked the same question. A long answer, or one with no words at all, is not judged.
 */
export function answersAsk(resultJson: string, argsJson: string): boolean {
  if (resultJson.length > JUDGED_LENGTH) return true;
  const result = resultJson.match(WORD) ?? [];
  if (result.length === 0) return true;
  const asked = wordsOf(jsonValue(argsJson, argsJson), new Set());
  return result.some((w) => asked.has(w));
}
