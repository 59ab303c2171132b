import type { Decision, Evidence, TerminalState } from './events.js';
import type { RuleAction } from './policy.js';
import type { RunState } from './run-state.js';

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

/**
 * A loop rule's `stop` under the action the policy gives the rule: the stop, nothing (`off`), or a
 * warning that lets the run go on, every time (`warn_only`) or the first time in a window
 * (`warn_first`).
 */
export function underAction(s: RunState, action: RuleAction, stop: Verdict): Verdict | null {
  if (action === 'off') return null;
  if (action === 'warn_only' || (action === 'warn_first' && !s.ruleWarned.includes(stop.rule ?? ''))) {
    return {
      decision: stop.decision === 'stop' ? 'continue' : 'execute',
      rule: stop.rule,
      message: stop.message,
      evidence: stop.evidence,
      warning: stop.message,
    };
  }
  return stop;
}
