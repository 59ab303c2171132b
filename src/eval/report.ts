/**
 * The evaluation harness: every run of every file through every detector, scored per file and
 * across all files (pooled runs: medians and p95 recomputed, not averaged), printed side by side.
 * Deterministic: files and detectors in the order given, rules sorted.
 */
import type { TraceRun } from '../trace/trace-run.js';
import { type Detector, NO_STOP, type Verdict } from './detector.js';
import { countLabels, type LabelCounts, labelRun, type RunLabels } from './labels.js';
import { computeMetrics, type DetectorMetrics, type JudgedRun } from './metrics.js';
import { table } from './table.js';
import { twinStops } from './twins.js';

export interface EvalFile {
  readonly name: string;
  readonly runs: readonly TraceRun[];
  /**
   * Ground-truth labels, one per run, when the source knows them better than the recorded hashes
   * do (a synthetic family knows which parts of an answer it made volatile); else from labels.ts.
   */
  readonly labels?: readonly RunLabels[];
  /**
   * For a synthetic source, how many calls of each failed run (by run id) are honest work before
   * its loop: the calls after them are what a guard could save on that run without stopping work.
   */
  readonly honestPrefixes?: ReadonlyMap<string, number>;
}

export interface FileReport {
  readonly name: string;
  readonly labels: LabelCounts;
  /**
   * Calls after the honest prefix, summed over the failed runs: the most any detector saves on
   * them without a stop inside honest work. Null when the source does not know its prefixes.
   */
  readonly loopCalls: number | null;
  /** One row per detector, in the order the detectors were given. */
  readonly rows: readonly DetectorMetrics[];
}

export interface EvalReport {
  readonly detectors: readonly string[];
  readonly files: readonly FileReport[];
  readonly totals: FileReport;
}

export const TOTALS_NAME = 'all files';

function checkedVerdict(detector: Detector, run: TraceRun, verdict: Verdict): Verdict {
  const stop = verdict.stopIndex;
  if (stop !== null && !(Number.isInteger(stop) && stop >= 0 && stop < run.calls.length))
    throw new RangeError(
      `detector "${detector.name}" returned stopIndex ${stop} for run ${run.run_id} with ${run.calls.length} calls`,
    );
  return verdict;
}

/** The calls after each failed run's honest prefix, summed; null when the source gives no prefixes. */
function loopCalls(file: EvalFile): number | null {
  const prefixes = file.honestPrefixes;
  if (prefixes === undefined) return null;
  let calls = 0;
  for (const run of file.runs) {
    if (run.outcome.success !== false) continue;
    const prefix = prefixes.get(run.run_id);
    if (prefix === undefined)
      throw new RangeError(`${file.name}: no honest prefix for failed run ${run.run_id}`);
    calls += run.calls.length - prefix;
  }
  return calls;
}

/** One source judged: its report, and every detector's judged runs (for pooling with others). */
export interface JudgedFile {
  readonly report: FileReport;
  /** Per detector, in the order the detectors were given: that detector's judged runs. */
  readonly judged: readonly (readonly JudgedRun[])[];
}

/** Every run of one source through every detector; twin stops are found within the source only. */
export function judgeFile(file: EvalFile, detectors: readonly Detector[]): JudgedFile {
  const labels: readonly RunLabels[] = file.labels ?? file.runs.map((run) => labelRun(run));
  const judged = detectors.map((detector) => {
    const verdicts = file.runs.map((run) => checkedVerdict(detector, run, detector.judge(run)));
    const twins = twinStops(file.runs, verdicts);
    return file.runs.map(
      (run, r): JudgedRun => ({
        runId: run.run_id,
        calls: run.calls.length,
        success: run.outcome.success,
        labels: labels[r] ?? { stuck: null, pingPong: null },
        verdict: verdicts[r] ?? NO_STOP,
        twin: twins[r] ?? false,
        honestPrefix: file.honestPrefixes?.get(run.run_id),
      }),
    );
  });
  return {
    report: {
      name: file.name,
      labels: countLabels(file.runs, labels),
      loopCalls: loopCalls(file),
      rows: detectors.map((detector, d) => computeMetrics(detector.name, judged[d] ?? [])),
    },
    judged,
  };
}

/**
 * Judged sources pooled as one: counts summed, and every metric recomputed over the pooled runs
 * (a median of the pooled runs, not a median of medians). `detectors` names the rows, in order.
 */
export function poolFiles(
  name: string,
  detectors: readonly string[],
  parts: readonly JudgedFile[],
): JudgedFile {
  const judged = detectors.map((_, d) => parts.flatMap((part) => part.judged[d] ?? []));
  // Every count summed, from the counts of no runs (all 0).
  const labels: Record<keyof LabelCounts, number> = { ...countLabels([]) };
  for (const part of parts)
    for (const key of Object.keys(labels) as (keyof LabelCounts)[]) labels[key] += part.report.labels[key];
  return {
    report: {
      name,
      labels,
      loopCalls: parts.every((part) => part.report.loopCalls !== null)
        ? parts.reduce((total, part) => total + (part.report.loopCalls ?? 0), 0)
        : null,
      rows: detectors.map((detector, d) => computeMetrics(detector, judged[d] ?? [])),
    },
    judged,
  };
}

/** Detector names, checked to be distinct: rows are matched by name. */
export function detectorNames(detectors: readonly Detector[]): string[] {
  const names = detectors.map((detector) => detector.name);
  const duplicate = names.find((name, i) => names.indexOf(name) !== i);
  if (duplicate !== undefined) throw new Error(`two detectors are named "${duplicate}"`);
  return names;
}

export function evaluate(files: readonly EvalFile[], detectors: readonly Detector[]): EvalReport {
  const names = detectorNames(detectors);
  const judged = files.map((file) => judgeFile(file, detectors));
  return {
    detectors: names,
    files: judged.map((file) => file.report),
    totals: poolFiles(TOTALS_NAME, names, judged).report,
  };
}

// ---------------------------------------------------------------------------------------------
// Text table

const COLUMNS = [
  'detector',
  'stops',
  'stuck caught',
  'missed',
  'pre-onset',
  'wasted p50/p95/max',
  'ping-pong caught',
  'false stops',
  'saved calls (unsucc.)',
  'stops by rule',
] as const;

const pct = (value: number | null) => (value === null ? 'n/a' : `${value.toFixed(1)}%`);
const num = (value: number | null) => (value === null ? '-' : String(value));

function rowCells(row: DetectorMetrics): string[] {
  const rules = Object.entries(row.stopsByRule)
    .map(([rule, count]) => `${rule}=${count}`)
    .join(' ');
  return [
    row.detector,
    String(row.stoppedRuns),
    `${row.stuckCaught}/${row.stuckRuns} (${pct(row.stuckCaughtPct)})`,
    String(row.stuckMissed),
    String(row.stuckStoppedBeforeOnset),
    `${num(row.wastedMedian)}/${num(row.wastedP95)}/${num(row.wastedMax)}`,
    `${row.pingPongCaught}/${row.pingPongRuns}`,
    `${row.falseStops}/${row.successfulRuns} (${pct(row.falseStopsPct)}), ${row.falseStopsOnCleanRuns} clean`,
    `${row.callsSavedUnsuccessful}/${row.unsuccessfulCalls} (${pct(row.callsSavedUnsuccessfulPct)}), ${row.callsSavedByTwinStops} by twin stops`,
    rules === '' ? '-' : rules,
  ];
}

function section(report: FileReport): string[] {
  const l = report.labels;
  return [
    `== ${report.name}: ${l.runs} runs, ${l.calls} calls; outcome true/false/unknown ${l.successful}/${l.unsuccessful}/${l.unknownOutcome}; ` +
      `stuck ${l.stuck} (of them successful ${l.successfulStuck}), ping-pong ${l.pingPong}`,
    table(COLUMNS, report.rows.map(rowCells)),
  ];
}

/** A readable, aligned text rendering: one table per file (detectors as rows), then the totals. */
export function formatTable(report: EvalReport): string {
  const lines = [...report.files, report.totals].flatMap((file) => [...section(file), '']);
  lines.push(
    'stuck caught: stopped at or before the last call of the first stuck streak; pre-onset: of those, stopped before',
    'the streak began. wasted: calls run after the 3rd identical call (nearest-rank p50/p95, max). false stops: stopped',
    'runs with success=true ("clean": of those, runs without a stuck streak of their own). saved calls: calls not',
    'run on success=false runs / all calls of those runs; "by twin stops": of those, calls saved by stops at a call where',
    'a successful run identical through that call was stopped too (src/eval/twins.ts).',
  );
  return `${lines.join('\n')}\n`;
}
