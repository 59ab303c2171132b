import type { DomainEvent, RecordedEvent, TerminalState } from '../domain/index.js';

/** One run as `loopguard replay --json` and `rebuild --json` print it: exactly these keys. */
export interface RunSummary {
  readonly run_id: string;
  readonly terminal_state: TerminalState | null;
  readonly rule: string | null;
  readonly stop_step: number | null;
  readonly calls_total: number;
  readonly calls_executed: number;
  readonly calls_cached: number;
}

interface Tally {
  requests: number;
  executed: number;
  cached: number;
  rule: string | null;
  stopCallId: string | null;
  total: number | null;
  terminal: TerminalState | null;
}

/** A recorded call's id carries its step (`step-<n>`) when it came from a trace. */
export const callIdForStep = (step: number): string => `step-${step}`;
const stepOf = (callId: string | null): number | null => {
  const m = callId === null ? null : /^step-(\d+)$/.exec(callId);
  return m?.[1] === undefined ? null : Number(m[1]);
};

const ENDS = new Set(['refuse', 'stop_partial', 'stop', 'wait']);

/** A run's rule after one more event: the first guard decision that ended or refused something names it. */
export function ruleAfter(rule: string | null, e: DomainEvent): string | null {
  return rule === null && e.type === 'GuardDecided' && ENDS.has(e.decision) ? e.rule : rule;
}

/**
 * Folds a run's events into its summary. Replay and rebuild both use this, so the two cannot
 * disagree: the rule is the first guard decision that ended or refused something, the stop step
 * the first call that was offered and did not run.
 */
export class RunSummaryFold {
  private readonly tallies = new Map<string, Tally>();

  apply(rec: RecordedEvent): void {
    let t = this.tallies.get(rec.runId);
    if (t === undefined) {
      t = { requests: 0, executed: 0, cached: 0, rule: null, stopCallId: null, total: null, terminal: null };
      this.tallies.set(rec.runId, t);
    }
    const e = rec.event;
    switch (e.type) {
      case 'RunStarted': {
        const total = Number(e.meta.calls_total);
        t.total = Number.isInteger(total) ? total : null;
        break;
      }
      case 'ToolCallRequested':
        t.requests++;
        break;
      case 'GuardDecided':
        if (e.decision === 'execute') t.executed++;
        else if (e.decision === 'return_cached_success') t.cached++;
        else if (e.phase === 'before' && t.stopCallId === null) t.stopCallId = e.callId;
        t.rule = ruleAfter(t.rule, e);
        break;
      case 'RunStopped':
        t.terminal = e.report.terminalState;
        break;
      case 'RunResumed':
        t.terminal = null;
        break;
    }
  }

  summary(runId: string): RunSummary | undefined {
    const t = this.tallies.get(runId);
    if (t === undefined) return undefined;
    return {
      run_id: runId,
      terminal_state: t.terminal,
      rule: t.rule,
      stop_step: stepOf(t.stopCallId),
      calls_total: t.total ?? t.requests,
      calls_executed: t.executed,
      calls_cached: t.cached,
    };
  }

  runIds(): string[] {
    return [...this.tallies.keys()];
  }
}
