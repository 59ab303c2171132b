/**
 * Scoring one detector against the labels of a set of runs.
 *
 * Definitions (all counts are runs unless said otherwise):
 * - stuck run: `labels.stuck !== null` (see labels.ts); its first stuck streak spans onset..end.
 * - caught: the detector stopped the run at or before the last call of that first streak,
 *   `stopIndex !== null && stopIndex <= end`, i.e. it kept at least one looping call from running.
 *   Stopping before the onset counts as caught too (the loop never ran); those stops are also
 *   counted separately in `stuckStoppedBeforeOnset` (step caps can "catch" loops that way by luck).
 *   A stop after the first streak ended is a miss, even if a later streak is stopped.
 * - wasted calls (per caught stuck run) = max(0, stopIndex - (onset + 2)): the looping calls that
 *   ran after the third identical call; 0 means the detector refused the call right after the third
 *   identical call (or earlier).
 * - median / p95: nearest-rank on the values sorted ascending, rank = ceil(p/100 * n) (1-based),
 *   value = sorted[rank - 1]; null when there are no values. Deterministic, always a data value.
 * - false stop: a run with outcome.success === true that the detector stopped (every stop is before
 *   a recorded call, so the run did not get to its last call).
 * - calls saved on unsuccessful runs: over runs with outcome.success === false,
 *   sum of (calls.length - stopIndex) for the stopped ones.
 * - twin stops (see twins.ts): stops on unsuccessful runs at a call where a successful run of the
 *   same source, identical through that call, was stopped too; `callsSavedByTwinStops` is their
 *   share of the calls saved: savings the detector paid for with a false stop.
 * - calls saved in honest work: where a (synthetic) source knows how many calls of each
 *   unsuccessful run are honest work before its loop, the calls saved by stops inside that work:
 *   the detector stopped work it would stop on a successful run doing the same, identical or not.
 *   null when any unsuccessful run's prefix is unknown.
 * - stops by rule: every stop, by `verdict.rule` (null rule is counted as "(none)").
 * - percentages: 100 * part / whole rounded to 0.1, null when whole is 0.
 */
import type { Verdict } from './detector.js';
import type { RunLabels } from './labels.js';

/** One run as seen by the metrics: its size, outcome, labels and one detector's verdict. */
export interface JudgedRun {
  readonly runId: string;
  readonly calls: number;
  readonly success: boolean | null;
  readonly labels: RunLabels;
  readonly verdict: Verdict;
  /** A twin stop (see twins.ts); absent means no. */
  readonly twin?: boolean;
  /** How many of its calls are honest work before its loop, when the source knows (synthetic runs). */
  readonly honestPrefix?: number;
}

export interface DetectorMetrics {
  readonly detector: string;
  readonly runs: number;
  readonly calls: number;
  readonly stoppedRuns: number;
  readonly stuckRuns: number;
  readonly stuckCaught: number;
  readonly stuckCaughtPct: number | null;
  readonly stuckMissed: number;
  readonly stuckStoppedBeforeOnset: number;
  readonly wastedMedian: number | null;
  readonly wastedP95: number | null;
  readonly wastedMax: number | null;
  readonly pingPongRuns: number;
  readonly pingPongCaught: number;
  readonly successfulRuns: number;
  readonly falseStops: number;
  readonly falseStopsPct: number | null;
  /** False stops on successful runs that had no stuck streak of their own: the ones that matter most. */
  readonly falseStopsOnCleanRuns: number;
  /** Run ids of the false stops, sorted. */
  readonly falseStopRunIds: readonly string[];
  readonly unsuccessfulRuns: number;
  readonly unsuccessfulCalls: number;
  readonly callsSavedUnsuccessful: number;
  readonly callsSavedUnsuccessfulPct: number | null;
  readonly twinStops: number;
  readonly callsSavedByTwinStops: number;
  /** Calls saved on unsuccessful runs by stops inside their honest prefix; null when a prefix is unknown. */
  readonly callsSavedInHonestWork: number | null;
  readonly unknownOutcomeRuns: number;
  readonly unknownOutcomeStops: number;
  readonly stopsByRule: Readonly<Record<string, number>>;
}

/** Nearest-rank percentile (p in (0, 100]) of the values; null for no values. */
export function nearestRank(values: readonly number[], p: number): number | null {
  if (!(p > 0 && p <= 100)) throw new RangeError(`percentile must be in (0, 100], got ${p}`);
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] ?? null;
}

export function percent(part: number, whole: number): number | null {
  if (whole === 0) return null;
  return Math.round((1000 * part) / whole) / 10;
}

/** Wasted calls for a caught stuck run (see the module comment). */
export function wastedCalls(stopIndex: number, onset: number): number {
  return Math.max(0, stopIndex - (onset + 2));
}

export function computeMetrics(detector: string, judged: readonly JudgedRun[]): DetectorMetrics {
  let calls = 0;
  let stoppedRuns = 0;
  let stuckRuns = 0;
  let stuckCaught = 0;
  let stuckStoppedBeforeOnset = 0;
  const wasted: number[] = [];
  let pingPongRuns = 0;
  let pingPongCaught = 0;
  let successfulRuns = 0;
  let falseStops = 0;
  let falseStopsOnCleanRuns = 0;
  const falseStopRunIds: string[] = [];
  let unsuccessfulRuns = 0;
  let unsuccessfulCalls = 0;
  let callsSavedUnsuccessful = 0;
  let twinStops = 0;
  let callsSavedByTwinStops = 0;
  let callsSavedInHonestWork: number | null = 0;
  let unknownOutcomeRuns = 0;
  let unknownOutcomeStops = 0;
  const rules = new Map<string, number>();

  for (const run of judged) {
    calls += run.calls;
    const stop = run.verdict.stopIndex;
    if (stop !== null) {
      stoppedRuns++;
      const rule = run.verdict.rule ?? '(none)';
      rules.set(rule, (rules.get(rule) ?? 0) + 1);
    }
    const stuck = run.labels.stuck;
    if (stuck !== null) {
      stuckRuns++;
      if (stop !== null && stop <= stuck.end) {
        stuckCaught++;
        if (stop < stuck.onset) stuckStoppedBeforeOnset++;
        wasted.push(wastedCalls(stop, stuck.onset));
      }
    }
    const pingPong = run.labels.pingPong;
    if (pingPong !== null) {
      pingPongRuns++;
      if (stop !== null && stop <= pingPong.end) pingPongCaught++;
    }
    if (run.success === true) {
      successfulRuns++;
      if (stop !== null) {
        falseStops++;
        falseStopRunIds.push(run.runId);
        if (run.labels.stuck === null) falseStopsOnCleanRuns++;
      }
    } else if (run.success === false) {
      unsuccessfulRuns++;
      unsuccessfulCalls += run.calls;
      if (stop !== null) callsSavedUnsuccessful += run.calls - stop;
      if (stop !== null && run.twin === true) {
        twinStops++;
        callsSavedByTwinStops += run.calls - stop;
      }
      if (run.honestPrefix === undefined) callsSavedInHonestWork = null;
      else if (callsSavedInHonestWork !== null && stop !== null && stop < run.honestPrefix)
        callsSavedInHonestWork += run.calls - stop;
    } else {
      unknownOutcomeRuns++;
      if (stop !== null) unknownOutcomeStops++;
    }
  }

  const stopsByRule: Record<string, number> = {};
  for (const rule of [...rules.keys()].sort()) stopsByRule[rule] = rules.get(rule) ?? 0;

  return {
    detector,
    runs: judged.length,
    calls,
    stoppedRuns,
    stuckRuns,
    stuckCaught,
    stuckCaughtPct: percent(stuckCaught, stuckRuns),
    stuckMissed: stuckRuns - stuckCaught,
    stuckStoppedBeforeOnset,
    wastedMedian: nearestRank(wasted, 50),
    wastedP95: nearestRank(wasted, 95),
    wastedMax: wasted.length === 0 ? null : Math.max(...wasted),
    pingPongRuns,
    pingPongCaught,
    successfulRuns,
    falseStops,
    falseStopsPct: percent(falseStops, successfulRuns),
    falseStopsOnCleanRuns,
    falseStopRunIds: falseStopRunIds.sort(),
    unsuccessfulRuns,
    unsuccessfulCalls,
    callsSavedUnsuccessful,
    callsSavedUnsuccessfulPct: percent(callsSavedUnsuccessful, unsuccessfulCalls),
    twinStops,
    callsSavedByTwinStops,
    callsSavedInHonestWork,
    unknownOutcomeRuns,
    unknownOutcomeStops,
    stopsByRule,
  };
}
