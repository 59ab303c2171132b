/**
 * What a call asks, apart from which page or which item: its canonical arguments without paging
 * and identity fields. Two calls with one intent are a next page or another item, never a
 * rephrasing; near-duplicate detection compares intents. A pure function of the arguments' text,
 * so every process computes the same intent for the same call.
 */
import { put } from './input-check.js';
import { jsonValue } from './json-value.js';
import { normalisedKey } from './redact.js';

/** Argument names that page through a result, once normalised. */
export const PAGING: ReadonlySet<string> = new Set([
  'page',
  'pagenumber',
  'pagetoken',
  'nextpagetoken',
  'cursor',
  'offset',
  'start',
  'skip',
  'after',
  'before',
  'version',
  'id',
]);

/** Whether an argument name is a paging or id field (`off-set`, `pageToken`, `user_id`, `userId`). */
export function isPagingKey(k: string): boolean {
  if (PAGING.has(normalisedKey(k))) return true;
  // `/Id$/` or `/(^|_)id$/i`, read off the last characters (this runs for every key of every call).
  const n = k.length;
  if (n < 2) return false;
  const i = k.charCodeAt(n - 2);
  const d = k.charCodeAt(n - 1);
  if (i === 73 /* I */ && d === 100 /* d */) return true;
  return (
    (i === 73 || i === 105) && (d === 68 || d === 100) && (n === 2 || k.charCodeAt(n - 3) === 95) /* _ */
  );
}

/**
 * Every paging name, normalised, contains one of these words. The arguments' text normalised the
 * same way contains each key's normalised name (normalising goes character by character), unless
 * an escape sequence (`\n`, `\u0000`) adds letters: such text is always parsed.
 */
const PAGING_WORD = /page|cursor|offset|start|skip|after|before|version|id/;
/** The same words as the text has them, tried first: most arguments with paging say `page` plainly. */
const PAGING_WORD_ANY_CASE = /page|cursor|offset|start|skip|after|before|version|id/i;

/** Whether the arguments may hold a paging key: false only when none of their keys can be one. */
const mayPage = (argsJson: string): boolean =>
  PAGING_WORD_ANY_CASE.test(argsJson) || argsJson.includes('\\') || PAGING_WORD.test(normalisedKey(argsJson));

export function intentOf(argsJson: string): string {
  if (!mayPage(argsJson)) return argsJson;
  return intentOfCompact(argsJson) ?? intentByParse(argsJson);
}

/** The intent by parsing: the definition, for any JSON text. */
export function intentByParse(argsJson: string): string {
  const v = jsonValue(argsJson);
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return argsJson;
  const kept: Record<string, unknown> = {};
  let paging = false;
  for (const [k, x] of Object.entries(v)) {
    if (isPagingKey(k)) paging = true;
    else put(kept, k, x);
  }
  return paging ? JSON.stringify(kept) : argsJson;
}

const INTEGER_KEY = /^(0|[1-9][0-9]*)$/;
const NESTED_INTEGER_KEY = /[{,]"(0|[1-9][0-9]*)":/;

/**
 * The intent of compact JSON text (what canonicalCall writes: no whitespace, unique keys) without
 * parsing it: the top-level members are cut out as they stand, which is what parsing and writing
 * them again gives for text JSON.stringify wrote. Null for text it does not read so (whitespace,
 * an escape in a key, an integer-like key, which parsing would reorder, a repeated key, an empty
 * value): those take `intentByParse`. Either way one pure function of the text.
 */
function intentOfCompact(json: string): string | null {
  if (json.charCodeAt(0) !== 123 /* { */ || json.charCodeAt(json.length - 1) !== 125 /* } */) return null;
  const kept: string[] = [];
  // The keys so far, to find a repeat: a list for the few keys of most calls, a set past them.
  const keys: string[] = [];
  let many: Set<string> | null = null;
  let paging = false;
  let i = 1;
  if (json.length === 2) return json;
  while (i < json.length) {
    if (json.charCodeAt(i) !== 34 /* " */) return null;
    const keyEnd = json.indexOf('"', i + 1);
    if (keyEnd < 0) return null;
    const key = json.slice(i + 1, keyEnd);
    const digit = json.charCodeAt(i + 1) >= 48 && json.charCodeAt(i + 1) <= 57;
    if (key.includes('\\') || (digit && INTEGER_KEY.test(key))) return null;
    if (many === null) {
      if (keys.includes(key)) return null;
      keys.push(key);
      if (keys.length > 16) many = new Set(keys);
    } else {
      if (many.has(key)) return null;
      many.add(key);
    }
    if (json.charCodeAt(keyEnd + 1) !== 58 /* : */) return null;
    const end = valueEnd(json, keyEnd + 2);
    if (end <= keyEnd + 2) return null;
    if (isPagingKey(key)) paging = true;
    else kept.push(json.slice(i, end));
    const c = json.charCodeAt(end);
    if (c === 125 && end === json.length - 1) break;
    if (c !== 44 /* , */) return null;
    i = end + 1;
  }
  // Parsing would put integer-like keys of nested objects first: such text is parsed.
  if (paging && NESTED_INTEGER_KEY.test(json)) return null;
  return paging ? `{${kept.join(',')}}` : json;
}

/** Where the value that starts at `from` ends (the index of the `,` or `}` after it), or -1. */
function valueEnd(json: string, from: number): number {
  let depth = 0;
  for (let i = from; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (c === 34) {
      // A string: skip to its closing quote, over escapes.
      for (i++; i < json.length; i++) {
        const d = json.charCodeAt(i);
        if (d === 92) i++;
        else if (d === 34) break;
      }
      if (i >= json.length) return -1;
    } else if (c === 123 || c === 91) depth++;
    else if (c === 125 || c === 93) {
      if (depth === 0) return c === 125 ? i : -1;
      depth--;
    } else if (c === 44 && depth === 0) return i;
    else if (c === 32 || c === 9 || c === 10 || c === 13) return -1;
  }
  return -1;
}
