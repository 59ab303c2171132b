import { jsonValue } from './json-value.js';

/**
 * Near-duplicate detection compares argument sets of one tool. The built-in measure is
 * deterministic text similarity; users can bring their own (embeddings) through `Similarity`.
 */
export type Similarity = (a: string, b: string) => number;

/** The words and values of canonical args JSON, without keys and punctuation. */
function valuesText(argsJson: string): string {
  let text = '';
  const walk = (v: unknown): void => {
    if (typeof v === 'string') text += ` ${v}`;
    else if (typeof v === 'number' || typeof v === 'boolean') text += ` ${String(v)}`;
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v !== null && typeof v === 'object') Object.values(v).forEach(walk);
  };
  // Text that is not JSON is walked as one string: its words are its values.
  walk(jsonValue(argsJson, argsJson));
  return text
    .toLowerCase()
    .replace(/[\s\p{P}]+/gu, ' ')
    .trim();
}

function bigrams(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (let i = 0; i + 1 < text.length; i++) {
    const g = text.slice(i, i + 2);
    out.set(g, (out.get(g) ?? 0) + 1);
  }
  return out;
}

interface Prepared {
  readonly text: string;
  readonly grams: Map<string, number>;
}

function prepare(argsJson: string): Prepared {
  const text = valuesText(argsJson);
  return { text, grams: bigrams(text) };
}

/**
 * Sørensen–Dice over character bigrams of the argument values: robust to reworded, reordered
 * and inflected queries ("refund policy" / "refund policies"), and works for scripts without
 * spaces. 1 means the same text, 0 nothing in common.
 */
function dice(a: Prepared, b: Prepared): number {
  if (a.text === b.text) return 1;
  if (a.text.length < 2 || b.text.length < 2) return 0;
  let shared = 0;
  for (const [g, n] of a.grams) shared += Math.min(n, b.grams.get(g) ?? 0);
  return (2 * shared) / (a.text.length - 1 + (b.text.length - 1));
}

/** The built-in measure, with nothing remembered between calls. */
export const diceSimilarity: Similarity = (a, b) => dice(prepare(a), prepare(b));

const CACHE_CAP = 256;

/**
 * The built-in measure with a cache of its own, for one guard or one worker: a run compares each
 * new call with the same few earlier ones, so bigram counts of recent texts save most of the work.
 * The cache holds a pure function's answers, so it changes how fast a result comes, never which.
 */
export function cachedDiceSimilarity(): Similarity {
  const cache = new Map<string, Prepared>();
  const prepared = (argsJson: string): Prepared => {
    let hit = cache.get(argsJson);
    if (hit === undefined) {
      hit = prepare(argsJson);
      if (cache.size >= CACHE_CAP) cache.delete(cache.keys().next().value as string);
      cache.set(argsJson, hit);
    }
    return hit;
  };
  return (a, b) => dice(prepared(a), prepared(b));
}
