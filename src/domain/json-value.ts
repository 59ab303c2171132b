/** The value a JSON text holds, or `otherwise` when the text is not JSON: results and arguments may be any text. */
export function jsonValue(text: string, otherwise?: unknown): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return otherwise;
  }
}

/**
 * The object or array a string holds as JSON (a harness envelope passed on as text), looked into
 * at `depth` 0 and 1 only; null when it holds none.
 */
export function jsonInside(text: string, depth: number): object | null {
  if (depth >= 2 || (!text.startsWith('{') && !text.startsWith('['))) return null;
  const inner = jsonValue(text);
  return typeof inner === 'object' && inner !== null ? inner : null;
}
