/**
 * Ground-truth labels computed from the recorded data alone, without any detector
 * (definitions from ../shared/traces/README.md, "Labels used for judging"):
 *
 * - a call's identity is (tool, args as JSON with keys sorted at every depth); its result is
 *   `result_sha256`;
 * - **stuck**: 3 or more consecutive calls with the same identity AND the same result. The label is
 *   the first such streak: `onset` = its first call, `end` = its last call (the maximal streak).
 *   Identical calls whose results differ (paging, polling, re-running a test after an edit) are not
 *   stuck;
 * - **ping-pong**: A,B,A,B at i..i+3 with A != B, where the second A returns the same result as the
 *   first A and the second B the same as the first B. The label is the first such i (`onset`), and
 *   `end` extends while each call keeps repeating the call (and result) two places before it.
 */
import type { TraceRun } from '../trace/trace-run.js';
import { callIdentity } from './identity.js';

const STUCK_MIN_STREAK = 3;

export interface Streak {
  /** Index of the first call of the pattern. */
  readonly onset: number;
  /** Index of the last call of the (maximal) pattern. */
  readonly end: number;
}

export interface RunLabels {
  readonly stuck: Streak | null;
  readonly pingPong: Streak | null;
}

export interface LabelCounts {
  readonly runs: number;
  readonly calls: number;
  readonly stuck: number;
  readonly pingPong: number;
  readonly successful: number;
  readonly unsuccessful: number;
  readonly unknownOutcome: number;
  /** Runs with outcome.success === true that nonetheless contain a stuck streak. */
  readonly successfulStuck: number;
}

/** Whether calls `a` and `b` are the same call (`ids`: each call's identity) with the same result. */
export function sameAt(ids: readonly string[], run: TraceRun, a: number, b: number): boolean {
  return ids[a] === ids[b] && run.calls[a]?.result_sha256 === run.calls[b]?.result_sha256;
}

/** The first streak of >= minLength consecutive identical (identity, result) calls, or null. */
export function findStuckStreak(run: TraceRun, minLength: number = STUCK_MIN_STREAK): Streak | null {
  const ids = run.calls.map((call) => callIdentity(call));
  let start = 0;
  for (let i = 1; i <= run.calls.length; i++) {
    if (i < run.calls.length && sameAt(ids, run, i, i - 1)) continue;
    // the streak start..i-1 just ended
    if (i - start >= minLength) return { onset: start, end: i - 1 };
    start = i;
  }
  return null;
}

/** The first A,B,A,B (A != B, each repeat returning the same result as before), or null. */
export function findPingPong(run: TraceRun): Streak | null {
  const ids = run.calls.map((call) => callIdentity(call));
  const n = run.calls.length;
  for (let i = 0; i + 3 < n; i++) {
    if (ids[i] === ids[i + 1]) continue;
    if (!sameAt(ids, run, i, i + 2) || !sameAt(ids, run, i + 1, i + 3)) continue;
    let end = i + 3;
    while (end + 1 < n && sameAt(ids, run, end + 1, end - 1)) end++;
    return { onset: i, end };
  }
  return null;
}

export function labelRun(run: TraceRun): RunLabels {
  return { stuck: findStuckStreak(run), pingPong: findPingPong(run) };
}

/** Label counts of the runs; `given` labels (one per run) instead of computing them, when a source has its own. */
export function countLabels(runs: readonly TraceRun[], given?: readonly RunLabels[]): LabelCounts {
  const labels = runs.map((run, i) => given?.[i] ?? labelRun(run));
  const count = (f: (run: TraceRun, l: RunLabels) => unknown) =>
    runs.filter((run, i) => f(run, labels[i] as RunLabels)).length;
  return {
    runs: runs.length,
    calls: runs.reduce((n, run) => n + run.calls.length, 0),
    stuck: count((_, l) => l.stuck),
    pingPong: count((_, l) => l.pingPong),
    successful: count((run) => run.outcome.success === true),
    unsuccessful: count((run) => run.outcome.success === false),
    unknownOutcome: count((run) => run.outcome.success !== true && run.outcome.success !== false),
    successfulStuck: count((run, l) => run.outcome.success === true && l.stuck),
  };
}
