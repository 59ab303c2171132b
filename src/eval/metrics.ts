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

/** Calls a stop kept from running: 0 for a run that went to its end. */
const saved = (r: JudgedRun): number => (r.verdict.stopIndex === null ? 0 : r.calls - r.verdict.stopIndex);
const stopped = (r: JudgedRun): boolean => r.verdict.stopIndex !== null;
const sum = (runs: readonly JudgedRun[], f: (r: JudgedRun) => number): number =>
  runs.reduce((n, r) => n + f(r), 0);

/** The runs caught on their first `label` streak (stopped at or before its last call): the stop and the onset. */
const caughtOn = (judged: readonly JudgedRun[], label: keyof RunLabels) =>
  judged.flatMap((r) => {
    const streak = r.labels[label];
    const stop = r.verdict.stopIndex;
    return streak !== null && stop !== null && stop <= streak.end ? [{ stop, onset: streak.onset }] : [];
  });

export function computeMetrics(detector: string, judged: readonly JudgedRun[]): DetectorMetrics {
  const stops = judged.filter(stopped);
  const stuck = judged.filter((r) => r.labels.stuck !== null);
  const caught = caughtOn(judged, 'stuck');
  const wasted = caught.map((c) => wastedCalls(c.stop, c.onset));
  const successful = judged.filter((r) => r.success === true);
  const falseStops = successful.filter(stopped);
  const unsuccessful = judged.filter((r) => r.success === false);
  const unsuccessfulCalls = sum(unsuccessful, (r) => r.calls);
  const callsSavedUnsuccessful = sum(unsuccessful, saved);
  const twins = unsuccessful.filter((r) => stopped(r) && r.twin === true);
  const inHonestWork = unsuccessful.filter(
    (r) =>
      r.verdict.stopIndex !== null && r.honestPrefix !== undefined && r.verdict.stopIndex < r.honestPrefix,
  );
  const unknownOutcome = judged.filter((r) => r.success !== true && r.success !== false);
  const stopsByRule: Record<string, number> = {};
  for (const rule of stops.map((r) => r.verdict.rule ?? '(none)').sort())
    stopsByRule[rule] = (stopsByRule[rule] ?? 0) + 1;

  return {
    detector,
    runs: judged.length,
    calls: sum(judged, (r) => r.calls),
    stoppedRuns: stops.length,
    stuckRuns: stuck.length,
    stuckCaught: caught.length,
    stuckCaughtPct: percent(caught.length, stuck.length),
    stuckMissed: stuck.length - caught.length,
    stuckStoppedBeforeOnset: caught.filter((c) => c.stop < c.onset).length,
    wastedMedian: nearestRank(wasted, 50),
    wastedP95: nearestRank(wasted, 95),
    wastedMax: wasted.length === 0 ? null : Math.max(...wasted),
    pingPongRuns: judged.filter((r) => r.labels.pingPong !== null).length,
    pingPongCaught: caughtOn(judged, 'pingPong').length,
    successfulRuns: successful.length,
    falseStops: falseStops.length,
    falseStopsPct: percent(falseStops.length, successful.length),
    falseStopsOnCleanRuns: falseStops.filter((r) => r.labels.stuck === null).length,
    falseStopRunIds: falseStops.map((r) => r.runId).sort(),
    unsuccessfulRuns: unsuccessful.length,
    unsuccessfulCalls,
    callsSavedUnsuccessful,
    callsSavedUnsuccessfulPct: percent(callsSavedUnsuccessful, unsuccessfulCalls),
    twinStops: twins.length,
    callsSavedByTwinStops: sum(twins, saved),
    callsSavedInHonestWork: unsuccessful.every((r) => r.honestPrefix !== undefined)
      ? sum(inHonestWork, saved)
      : null,
    unknownOutcomeRuns: unknownOutcome.length,
    unknownOutcomeStops: unknownOutcome.filter(stopped).length,
    stopsByRule,
  };
}
