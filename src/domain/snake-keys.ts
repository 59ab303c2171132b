/**
 * One field casing in every `--json` output: the library's camelCase objects are written with
 * snake_case field names (`terminalState` -> `terminal_state`). Maps whose keys are data, not
 * field names (rule -> count, fingerprint -> count), keep their keys.
 */
const DATA_KEYED: ReadonlySet<string> = new Set(['stopsByRule', 'counts']);

const snake = (key: string): string =>
  /^[a-z][a-zA-Z0-9]*$/.test(key) ? key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`) : key;

export function snakeKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(snakeKeys);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const key = snake(k);
    const kept =
      DATA_KEYED.has(k) && typeof v === 'object' && v !== null && !Array.isArray(v)
        ? Object.fromEntries(Object.entries(v).map(([dk, dv]) => [dk, snakeKeys(dv)]))
        : snakeKeys(v);
    Object.defineProperty(out, key, { value: kept, enumerable: true, writable: true, configurable: true });
  }
  return out;
}
