import type { WindowEntry } from './run-state.js';

type Compared = Pick<WindowEntry, 'callId' | 'result'>;

/**
 * The calls a stop compared and the result class each got (`n:` classes had volatile parts
 * masked, see normalised-result.ts), so the audit shows why they counted as the same.
 */
export function compared(entries: readonly Compared[]): string {
  const named = entries.map((w) => {
    const r = w.result;
    if (r === undefined) return w.callId;
    return r.startsWith('n:')
      ? `${w.callId} -> ${r.slice(2, 14)} (volatile parts masked)`
      : `${w.callId} -> ${r.slice(0, 12)}`;
  });
  return `calls ${named.join(', ')}`;
}
