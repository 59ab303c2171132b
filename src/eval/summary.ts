/**
 * One line per source: loopguard beside the one-line rules (3 and 5 identical calls in a row) and
 * the step caps, on what the guard is judged by: stuck runs caught, wasted calls, false stops,
 * calls saved on failed runs, and that saving as a multiple of the 3-identical rule's.
 */
import type { DetectorMetrics } from './metrics.js';
import type { EvalReport, FileReport } from './report.js';

const THREE = '3 identical in a row';
const FIVE = '5 identical in a row';
/** The step caps among the default baselines, by name. */
const CAPS = [/^openai-agents max_turns=/, /^vercel-ai stepCountIs\(/, /^crewai max_iter=/];

function row(file: FileReport, ours: string, marked: boolean): string[] {
  const by = (name: string) => file.rows.find((r) => r.detector === name);
  const caps = file.rows.filter((r) => CAPS.some((c) => c.test(r.detector)));
  const lg = by(ours);
  const three = by(THREE);
  const five = by(FIVE);
  const cell = (f: (m: DetectorMetrics) => number | null, ...ms: (DetectorMetrics | undefined)[]) =>
    ms.map((m) => (m === undefined ? '-' : String(f(m) ?? '-'))).join(' / ');
  const ratio =
    lg === undefined || three === undefined
      ? '-'
      : three.callsSavedUnsuccessful === 0
        ? lg.callsSavedUnsuccessful === 0
          ? '-'
          : 'inf'
        : `${(lg.callsSavedUnsuccessful / three.callsSavedUnsuccessful).toFixed(2)}x`;
  return [
    `${file.name}${marked ? ' (synthetic)' : ''}`,
    lg === undefined ? '-' : `${lg.stuckCaught}/${lg.stuckRuns}`,
    lg === undefined ? '-' : `${lg.wastedMedian ?? '-'}`,
    cell((m) => m.falseStops, lg, three, five, ...caps),
    cell((m) => m.callsSavedUnsuccessful, lg, three, five, ...caps),
    ratio,
  ];
}

/** The per-source summary as an aligned text table; `synthetic` marks every source as synthetic. */
export function formatSummary(report: EvalReport, synthetic: boolean, ours = 'loopguard'): string {
  const header = [
    'source',
    'stuck caught',
    'wasted p50',
    'false stops: loopguard / 3 id. / 5 id. / caps',
    'saved on failed runs: same order',
    'saved vs 3 id.',
  ];
  const rows = [...report.files, ...(report.files.length > 1 ? [report.totals] : [])].map((f) =>
    row(f, ours, synthetic),
  );
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, c) => cell.padEnd(widths[c] ?? 0))
      .join('  ')
      .trimEnd();
  const caps = report.detectors.filter((d) => CAPS.some((c) => c.test(d))).join(', ');
  return `${[line(header), line(header.map((_, c) => '-'.repeat(widths[c] ?? 0))), ...rows.map(line)].join('\n')}\ncaps: ${caps}\n`;
}
