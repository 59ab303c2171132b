/** The value a JSON text holds, or `otherwise` when the text is not JSON: results and arguments may be any text. */
export function jsonValue(text: string, otherwise?: unknown): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return otherwise;
  }
}
