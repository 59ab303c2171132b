/**
 * What a call asks, apart from which page or which item: its canonical arguments without paging
 * and identity fields. Two calls with one intent are a next page or another item, never a
 * rephrasing; near-duplicate detection compares intents.
 */
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

export const isPagingKey = (k: string): boolean =>
  PAGING.has(k.toLowerCase().replace(/[^a-z0-9]/g, '')) || /(^|_)id$/i.test(k) || /Id$/.test(k);

/**
 * Each call's intent is needed twice (the check before it, the fold after it) and usually again
 * for the next calls of its tool: a small memo of this pure function saves the parsing.
 */
const memo = new Map<string, string>();
const MEMO_CAP = 256;

export function intentOf(argsJson: string): string {
  const hit = memo.get(argsJson);
  if (hit !== undefined) return hit;
  const intent = computeIntent(argsJson);
  rememberIntent(argsJson, intent);
  return intent;
}

/** Lets the canonicaliser, which holds the parsed arguments anyway, hand over an intent it computed. */
export function rememberIntent(argsJson: string, intent: string): void {
  if (memo.size >= MEMO_CAP) memo.delete(memo.keys().next().value as string);
  memo.set(argsJson, intent);
}

/** The intent of canonical arguments already in hand as an object (keys sorted). */
export function intentOfObject(args: Readonly<Record<string, unknown>>, argsJson: string): string {
  let kept: Record<string, unknown> | null = null;
  for (const k in args) {
    if (isPagingKey(k)) {
      kept ??= { ...args };
      delete kept[k];
    }
  }
  return kept === null ? argsJson : JSON.stringify(kept);
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
  for (const [k, x] of Object.entries(v)) if (!isPagingKey(k)) kept[k] = x;
  return JSON.stringify(kept);
}
