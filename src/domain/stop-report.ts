import type { Evidence, StopReport, TerminalState } from './events.js';
import { type ChildState, treeSpend } from './family.js';
import type { OperationStatus, RunState } from './run-state.js';

const RESUME: Record<TerminalState, { condition: string; next: string }> = {
  COMPLETED: { condition: 'none: the goal was verified as met', next: 'none' },
  STOPPED_LOOP_GUARD: {
    condition:
      'a recorded precondition change (new information, a different approach or a raised budget), with who approved it',
    next: 'resume_from_checkpoint',
  },
  NEEDS_HUMAN: {
    condition: 'the unmet precondition resolved by a person and recorded with who approved it',
    next: 'human_review',
  },
  FAILED: {
    condition: 'the failing dependency fixed and the change recorded',
    next: 'investigate_then_resume',
  },
  PARTIAL: {
    condition: 'the listed gaps filled, recorded as a precondition change',
    next: 'deliver_partial_result',
  },
};

/** The keys of the run's operations in one of `statuses`. */
export const operationsIn = (s: RunState, ...statuses: OperationStatus[]): string[] =>
  Object.entries(s.operations)
    .filter(([, o]) => statuses.includes(o.status))
    .map(([k]) => k);

/** What was done, what is missing and how to resume: the run's last word. */
export function stopReport(
  s: RunState,
  atMs: number,
  stop: {
    readonly terminal: TerminalState;
    readonly reason: string;
    readonly message: string;
    readonly evidence: Evidence;
    readonly unmetPrecondition?: string | undefined;
    readonly gaps?: readonly string[];
    readonly children?: readonly ChildState[] | undefined;
  },
): StopReport {
  const resume = RESUME[stop.terminal];
  return {
    terminalState: stop.terminal,
    guardReason: stop.reason,
    message: stop.message,
    completed: s.succeededTools,
    completedOperations: operationsIn(s, 'completed'),
    inDoubtOperations: operationsIn(s, 'in_doubt', 'claimed'),
    gaps: stop.gaps ?? [],
    lastSafeCheckpoint: s.lastCheckpoint?.id ?? null,
    unmetPrecondition: stop.unmetPrecondition ?? null,
    resumeCondition: resume.condition,
    nextAllowedAction: resume.next,
    evidence: stop.evidence,
    spend: { ...treeSpend(s), elapsedMs: Math.max(0, atMs - s.startedAtMs) },
    children: stop.children ?? [],
  };
}
