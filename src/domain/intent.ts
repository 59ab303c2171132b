/**
 * What a call asks, apart from which page or which item: its canonical arguments without paging
 * and identity fields. Two calls with one intent are a next page or another item, never a
 * rephrasing; near-duplicate detection compares intents.
 */
import { put } from './input-check.js';

const PAGING = new Set([
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

const pagingKeys = new Map<string, boolean>();

/** Whether an argument name is a paging or id field; remembered, since names repeat on every call. */
export function isPagingKey(k: string): boolean {
  let paging = pagingKeys.get(k);
  if (paging === undefined) {
    paging = PAGING.has(k.toLowerCase().replace(/[^a-z0-9]/g, '')) || /(^|_)id$/i.test(k) || /Id$/.test(k);
    if (pagingKeys.size < 4096) pagingKeys.set(k, paging);
  }
  return paging;
}

/**
 * Each call's intent is needed right after its arguments are canonicalised (the check before the
 * call, the fold after it), on the very same string: a small ring of recent ones, searched by
 * string equality (the same string object compares in one step), saves recomputing it.
 */
const RING = 16;
const ringArgs: string[] = [];
const ringIntents: string[] = [];
let ringNext = 0;

export function intentOf(argsJson: string): string {
  for (let i = 0; i < ringArgs.length; i++) if (ringArgs[i] === argsJson) return ringIntents[i] as string;
  const intent = computeIntent(argsJson);
  rememberIntent(argsJson, intent);
  return intent;
}

/** Lets the canonicaliser, which holds the parsed arguments anyway, hand over an intent it computed. */
export function rememberIntent(argsJson: string, intent: string): void {
  ringArgs[ringNext] = argsJson;
  ringIntents[ringNext] = intent;
  ringNext = (ringNext + 1) % RING;
}

/** The intent of canonical arguments already in hand as an object (keys sorted). */
export function intentOfObject(args: Readonly<Record<string, unknown>>, argsJson: string): string {
  let paging = false;
  for (const k in args) if (isPagingKey(k)) paging = true;
  if (!paging) return argsJson;
  const kept: Record<string, unknown> = {};
  for (const k in args) if (!isPagingKey(k)) put(kept, k, args[k]);
  return JSON.stringify(kept);
}

/** A key that could be a paging or id field; without one the intent is the arguments themselves. */
const MAYBE_PAGING = /"[^"]*(page|cursor|offset|start|skip|after|before|version|id)[^"]*":/i;

function computeIntent(argsJson: string): string {
  if (!MAYBE_PAGING.test(argsJson)) return argsJson;
  let v: unknown;
  try {
    v = JSON.parse(argsJson);
  } catch {
    return argsJson;
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return argsJson;
  const kept: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) if (!isPagingKey(k)) put(kept, k, x);
  return JSON.stringify(kept);
}
