/**
 * One line per source: loopguard beside the one-line rules (3 and 5 identical in a row) and the
 * step caps: stuck runs caught, wasted calls, false stops, calls saved on failed runs and that
 * saving as a multiple of the 3-identical rule's, the same less what twin stops saved (twins.ts),
 * and, where a synthetic source knows its failed runs' honest prefixes, what stops outside honest
 * work saved beside the calls after those prefixes.
 */
import type { DetectorMetrics } from './metrics.js';
import type { EvalReport, FileReport } from './report.js';
import { table } from './table.js';

export const THREE = '3 identical in a row';
const FIVE = '5 identical in a row';
/** The step caps among the default baselines, by name. */
const CAPS = [/^openai-agents max_turns=/, /^vercel-ai stepCountIs\(/, /^crewai max_iter=/];

const TWIN_NOTE =
  'twin stop: a stop on a failed run at a call where a successful run of the same source, identical through that call,\n' +
  'was stopped too: those savings come with a false stop (src/eval/twins.ts).\n';
const HONEST_NOTE =
  "outside honest work (synthetic sources, which know each failed run's honest prefix: the working run it begins\n" +
  'with, cut short): loop calls, the calls after those prefixes, the most a detector saves without stopping honest\n' +
  'work; then the saving of stops after the prefix, loopguard / 3 id. (a stop inside it stops work the same rule\n' +
  'stops on a successful run doing the same, identical or not).\n';

/** A source's row for `detector`. */
export const rowOf = (file: FileReport, detector: string): DetectorMetrics | undefined =>
  file.rows.find((row) => row.detector === detector);

/** `ours` as a multiple of `theirs`: null when both are 0, Infinity when only theirs is. */
export const ratio = (ours: number, theirs: number): number | null =>
  theirs === 0 ? (ours === 0 ? null : Number.POSITIVE_INFINITY) : ours / theirs;

/** A multiple as printed: `1.22x`, `inf`, or `-` for none. */
export const formatRatio = (value: number | null): string =>
  value === null ? '-' : value === Number.POSITIVE_INFINITY ? 'inf' : `${value.toFixed(2)}x`;

const times = (ours: number, theirs: number) => formatRatio(ratio(ours, theirs));

/** Calls a detector saved on failed runs by stops after their honest prefixes; null when unknown. */
export const savedOutsideHonestWork = (m: DetectorMetrics | undefined): number | null =>
  m === undefined || m.callsSavedInHonestWork === null
    ? null
    : m.callsSavedUnsuccessful - m.callsSavedInHonestWork;

/** The family's loop calls, and the calls each detector saved by stops outside honest work. */
function outsideHonestWork(
  file: FileReport,
  lg: DetectorMetrics | undefined,
  three: DetectorMetrics | undefined,
): string {
  const ours = savedOutsideHonestWork(lg);
  const theirs = savedOutsideHonestWork(three);
  if (file.loopCalls === null || ours === null || theirs === null) return '-';
  return `${file.loopCalls}; ${ours} / ${theirs} (${times(ours, theirs)})`;
}

const HEADER = [
  'source',
  'stuck caught',
  'wasted p50',
  'false stops: loopguard / 3 id. / 5 id. / caps',
  'saved on failed runs: same order',
  'outside honest work: loop calls; loopguard / 3 id.',
  'less twin stops: loopguard / 3 id.',
  'saved vs 3 id.',
] as const;
const HONEST_COLUMN = HEADER.indexOf('outside honest work: loop calls; loopguard / 3 id.');

function row(file: FileReport, ours: string, marked: boolean): string[] {
  const caps = file.rows.filter((r) => CAPS.some((c) => c.test(r.detector)));
  const lg = rowOf(file, ours);
  const three = rowOf(file, THREE);
  const five = rowOf(file, FIVE);
  const cell = (f: (m: DetectorMetrics) => number | null, ...ms: (DetectorMetrics | undefined)[]) =>
    ms.map((m) => (m === undefined ? '-' : String(f(m) ?? '-'))).join(' / ');
  const earned = (m: DetectorMetrics) => m.callsSavedUnsuccessful - m.callsSavedByTwinStops;
  const both = lg !== undefined && three !== undefined;
  return [
    `${file.name}${marked ? ' (synthetic)' : ''}`,
    lg === undefined ? '-' : `${lg.stuckCaught}/${lg.stuckRuns}`,
    lg === undefined ? '-' : `${lg.wastedMedian ?? '-'}`,
    cell((m) => m.falseStops, lg, three, five, ...caps),
    cell((m) => m.callsSavedUnsuccessful, lg, three, five, ...caps),
    outsideHonestWork(file, lg, three),
    both ? `${earned(lg)} / ${earned(three)} (${times(earned(lg), earned(three))})` : '-',
    both ? times(lg.callsSavedUnsuccessful, three.callsSavedUnsuccessful) : '-',
  ];
}

/** The per-source summary as an aligned text table; `synthetic` marks every source as synthetic. */
export function formatSummary(report: EvalReport, synthetic: boolean, ours = 'loopguard'): string {
  const all = [...report.files, ...(report.files.length > 1 ? [report.totals] : [])].map((f) =>
    row(f, ours, synthetic),
  );
  // Sources that do not know their runs' honest prefixes (recordings) get no column for them.
  const honest = all.some((r) => r[HONEST_COLUMN] !== '-');
  const keep = (cells: readonly string[]) => cells.filter((_, c) => honest || c !== HONEST_COLUMN);
  const header = keep(HEADER);
  const rows = all.map(keep);
  const caps = report.detectors.filter((d) => CAPS.some((c) => c.test(d))).join(', ');
  return `${table(header, rows)}\ncaps: ${caps}\n${TWIN_NOTE}${honest ? HONEST_NOTE : ''}`;
}
