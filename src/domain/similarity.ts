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
  try {
    walk(JSON.parse(argsJson));
  } catch {
    text = argsJson;
  }
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

/**
 * Bigram counts of recently compared texts. A run compares each new call with the same few earlier
 * ones, so a small cache saves most of the work; it changes no result, only how fast it comes.
 */
const cache = new Map<string, { text: string; grams: Map<string, number> }>();
const CACHE_CAP = 256;
function prepared(argsJson: string): { text: string; grams: Map<string, number> } {
  let hit = cache.get(argsJson);
  if (hit === undefined) {
    const text = valuesText(argsJson);
    hit = { text, grams: bigrams(text) };
    if (cache.size >= CACHE_CAP) cache.delete(cache.keys().next().value as string);
    cache.set(argsJson, hit);
  }
  return hit;
}

/**
 * Sørensen–Dice over character bigrams of the argument values: robust to reworded, reordered
 * and inflected queries ("refund policy" / "refund policies"), and works for scripts without
 * spaces. 1 means the same text, 0 nothing in common.
 */
export const diceSimilarity: Similarity = (a, b) => {
  const { text: ta, grams: ga } = prepared(a);
  const { text: tb, grams: gb } = prepared(b);
  if (ta === tb) return 1;
  if (ta.length < 2 || tb.length < 2) return 0;
  let shared = 0;
  for (const [g, n] of ga) shared += Math.min(n, gb.get(g) ?? 0);
  return (2 * shared) / (ta.length - 1 + (tb.length - 1));
};
