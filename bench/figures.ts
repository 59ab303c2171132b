/**
 * Trials of `npm run bench` folded into figures: each figure is the median of its trials with
 * the min and max, for the value, the baseline and their ratio (the ratio taken within each
 * trial, so a burst of load from elsewhere on the machine moves both sides of it alike).
 */
import { type BenchResult, median, round, type TrialSample } from './bench-result.js';

interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

export interface BenchFigure {
  readonly name: string;
  readonly unit: string;
  readonly baseline: string;
  readonly trials: number;
  readonly value: Spread;
  readonly baseline_value: Spread;
  readonly ratio: Spread;
  readonly samples: readonly TrialSample[];
}

const spread = (values: readonly number[], digits = 2): Spread => ({
  median: round(median(values), digits),
  min: round(Math.min(...values), digits),
  max: round(Math.max(...values), digits),
});

/** Results of every trial, in the order the benches produced them, grouped by figure name. */
export function figuresOf(results: readonly BenchResult[]): BenchFigure[] {
  const byName = new Map<string, { first: BenchResult; samples: TrialSample[] }>();
  for (const r of results) {
    const entry = byName.get(r.name) ?? { first: r, samples: [] };
    byName.set(r.name, entry);
    entry.samples.push(...(r.samples ?? [{ value: r.value, baseline_value: r.baseline_value }]));
  }
  return [...byName.values()].map(({ first, samples }) => ({
    name: first.name,
    unit: first.unit,
    baseline: first.baseline,
    trials: samples.length,
    value: spread(samples.map((s) => s.value)),
    baseline_value: spread(samples.map((s) => s.baseline_value)),
    ratio: spread(
      samples.map((s) => (s.baseline_value === 0 ? Number.NaN : s.value / s.baseline_value)),
      3,
    ),
    samples,
  }));
}

const fmt = (n: number): string => (Math.abs(n) >= 1000 ? Math.round(n).toLocaleString('en-US') : String(n));

/** `median (min to max)`, or the one value of a single trial. */
function showSpread(s: Spread, unit = ''): string {
  const u = unit === '' ? '' : ` ${unit}`;
  return s.min === s.max ? `${fmt(s.median)}${u}` : `${fmt(s.median)}${u} (${fmt(s.min)} to ${fmt(s.max)})`;
}

export function textTable(figures: readonly BenchFigure[]): string {
  const header = ['name', 'value', 'baseline value', 'baseline', 'ratio', 'trials'];
  const rows = figures.map((f) => [
    f.name,
    showSpread(f.value, f.unit),
    showSpread(f.baseline_value, f.unit),
    f.baseline,
    showSpread(f.ratio),
    String(f.trials),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ');
  return `${[line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n')}\n`;
}

/** A Markdown table of the figures (median, then min to max), for the README. */
export function markdownTable(figures: readonly BenchFigure[]): string {
  const rows = figures.map(
    (f) =>
      `| ${f.name} | ${showSpread(f.value, f.unit)} | ${showSpread(f.baseline_value, f.unit)}: ${f.baseline} | ${showSpread(f.ratio)} | ${f.trials} |`,
  );
  return `${[
    '| name | value: median (min to max) | baseline: median (min to max) | ratio: median (min to max) | trials |',
    '|---|---|---|---|---|',
    ...rows,
  ].join('\n')}\n`;
}
