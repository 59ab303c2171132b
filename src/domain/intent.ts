/**
 * What a call asks, apart from which page or which item: its canonical arguments without paging
 * and identity fields. Two calls with one intent are a next page or another item, never a
 * rephrasing; near-duplicate detection compares intents.
 *
 * One function of the arguments' text and nothing else: the live guard, a rebuild and a worker
 * that takes a run over in another process compute the same intent for the same call.
 */
import { put } from './input-check.js';
import { normalisedKey } from './redact.js';

const PAGING: ReadonlySet<string> = new Set([
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
  return PAGING.has(normalisedKey(k)) || /(^|_)id$/i.test(k) || /Id$/.test(k);
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
  let v: unknown;
  try {
    v = JSON.parse(argsJson);
  } catch {
    return argsJson;
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return argsJson;
  let paging = false;
  for (const k of Object.keys(v)) if (isPagingKey(k)) paging = true;
  if (!paging) return argsJson;
  const kept: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) if (!isPagingKey(k)) put(kept, k, x);
  return JSON.stringify(kept);
}
