/**
 * Whether a result says anything. "ok", "", "done", {} are what edits, writes and `sed -i` print:
 * two calls answering them alike may still both have changed the world, so equal uninformative
 * answers are no evidence that a rephrased call got nowhere.
 */
const EMPTY_WORDS =
  /^(ok|okay|done|success|succeeded|true|false|null|none|nil|undefined|saved|written|updated|\[\]|\{\})?\.?$/i;

export function isInformative(resultJson: string): boolean {
  // Every empty answer above is short; a long one says something, and is not worth parsing here.
  if (resultJson.length > 64) return true;
  let v: unknown;
  try {
    v = JSON.parse(resultJson);
  } catch {
    v = resultJson;
  }
  if (v === null || typeof v === 'boolean') return false;
  if (typeof v === 'string') return !EMPTY_WORDS.test(v.trim());
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'object') return Object.keys(v).length > 0;
  return true;
}
