import type { Decision, Evidence, TerminalState } from './events.js';

/** The outcome of one rule: what to do, which rule said so, and why. */
export interface Verdict {
  readonly decision: Decision;
  readonly rule: string | null;
  readonly message: string;
  readonly evidence: Evidence;
  /** Set when the verdict ends the run. */
  readonly terminal?: TerminalState;
  readonly waitUntilMs?: number;
  readonly warning?: string;
  readonly unmetPrecondition?: string;
  readonly resultJson?: string;
}

export const evidence = (
  fingerprints: readonly string[],
  counts: Record<string, number>,
  thresholds: Record<string, number>,
): Evidence => ({ fingerprints, counts, thresholds });

export const stopVerdict = (
  phase: 'before' | 'after',
  rule: string,
  message: string,
  ev: Evidence,
  terminal: TerminalState = 'STOPPED_LOOP_GUARD',
  unmetPrecondition?: string,
): Verdict => ({
  decision: phase === 'before' ? 'stop_partial' : 'stop',
  rule,
  message,
  evidence: ev,
  terminal,
  ...(unmetPrecondition === undefined ? {} : { unmetPrecondition }),
});
