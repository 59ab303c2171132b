import type { DeciderDeps, Policy } from '../domain/index.js';
import { callIdForStep } from '../projections/run-summary.js';
import { replayRun } from '../trace/replay.js';
import type { RecordedRun } from './recorded-run-fold.js';

/**
 * How a new policy would have treated a recorded run:
 * - earlier: it stops the run before the recorded stop (or stops a run the recording let finish);
 * - same: it stops at the same call, or neither stops;
 * - later: it lets the recorded stopping call run and stops a later recorded call;
 * - not_at_all: it lets the recorded stopping call run and stops none of the recorded calls after it.
 */
type WhatIfChange = 'earlier' | 'same' | 'later' | 'not_at_all';

export interface WhatIfRow {
  readonly run_id: string;
  readonly change: WhatIfChange;
  readonly recorded_stop: number | null;
  readonly recorded_rule: string | null;
  readonly whatif_stop: number | null;
  readonly whatif_rule: string | null;
  /** Recorded calls that ran but would not have under the new policy. */
  readonly calls_saved: number;
  /**
   * Calls the new policy would run that the recording did not: recorded calls it lets through, plus
   * for `not_at_all` the agent's calls past the recorded stop when the run's recorded call count says
   * how many there were. A lower bound: an agent that got an answer instead of a refusal may go on.
   */
  readonly calls_lost: number;
  /**
   * True when the new policy runs a call whose tool never ran in the recording: its result is
   * unknown, so the decisions after it rest on the recorded calls that followed, not on what the
   * agent would really have done.
   */
  readonly beyond_recording: boolean;
}

/** Re-decides one recorded run under `policy` with the eval's replay; nothing is written to the log. */
export function whatIf(run: RecordedRun, policy: Policy, deps: DeciderDeps): WhatIfRow {
  const { stopIndex, summary, events } = replayRun(run.trace, policy, deps);
  const index = new Map(run.trace.calls.map((c, i) => [callIdForStep(c.step), i]));
  const ran = new Set<number>();
  for (const { event: e } of events)
    if (e.type === 'GuardDecided' && e.phase === 'before' && e.decision === 'execute')
      ran.add(index.get(e.callId ?? '') ?? -1);
  const recordedRan = new Set(run.ran);
  const recorded = run.stopIndex;
  const change: WhatIfChange =
    stopIndex === recorded
      ? 'same'
      : stopIndex !== null && (recorded === null || stopIndex < recorded)
        ? 'earlier'
        : stopIndex === null
          ? 'not_at_all'
          : 'later';
  const untraced =
    change === 'not_at_all' && run.callsTotal !== null
      ? Math.max(0, run.callsTotal - run.trace.calls.length)
      : 0;
  return {
    run_id: run.trace.run_id,
    change,
    recorded_stop: recorded,
    recorded_rule: run.rule,
    whatif_stop: stopIndex,
    whatif_rule: stopIndex === null ? null : summary.rule,
    calls_saved: run.ran.filter((i) => !ran.has(i)).length,
    calls_lost: [...ran].filter((i) => !recordedRan.has(i)).length + untraced,
    beyond_recording: run.unrun.some((i) => ran.has(i)),
  };
}

/** The runs by change, and the calls saved and lost over all of them. */
export function whatIfTotals(rows: readonly WhatIfRow[]) {
  const count = (c: WhatIfChange) => rows.filter((r) => r.change === c).length;
  return {
    runs: rows.length,
    earlier: count('earlier'),
    same: count('same'),
    later: count('later'),
    not_at_all: count('not_at_all'),
    calls_saved: rows.reduce((n, r) => n + r.calls_saved, 0),
    calls_lost: rows.reduce((n, r) => n + r.calls_lost, 0),
  };
}
