/**
 * How a synthetic family's figures spread across the seeds it was drawn from. Which stuck runs
 * begin with honest work that the one-line rule happens to stop is a per-seed draw, so one seed's
 * ratio is partly luck: the spread gives the median with the min and max, and on how many seeds
 * each of the targets held, beside the pooled figures (seeded-report.ts).
 */
import type { FileReport } from './report.js';
import { formatRatio, ratio, rowOf, savedOutsideHonestWork, THREE } from './summary.js';
import { table } from './table.js';

/** The target: calls saved on failed runs at least this multiple of the 3-identical rule's. */
const TARGET_SAVED_VS_THREE = 1.2;

export interface Spread {
  /** The middle value; of an even count, the mean of the two middle ones. */
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

/** Median, min and max of the values; null for none. Infinity sorts last, as the largest. */
export function spread(values: readonly number[]): Spread | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const at = (i: number) => sorted[i] ?? Number.NaN;
  const median = sorted.length % 2 === 1 ? at(mid) : (at(mid - 1) + at(mid)) / 2;
  return { median, min: at(0), max: at(sorted.length - 1) };
}

/** On how many seeds each target held for the detector judged (of `seeds`). */
interface TargetsHeld {
  readonly seeds: number;
  /** Every stuck run caught. */
  readonly allCaught: number;
  /** Median wasted calls 0 (or no stuck run caught, so none wasted). */
  readonly wastedMedianZero: number;
  /** No more false stops than the 3-identical rule. */
  readonly falseStopsAtMostThree: number;
  /** Calls saved on failed runs at least TARGET_SAVED_VS_THREE times the 3-identical rule's. */
  readonly savedAtTarget: number;
}

export interface FamilySpread {
  readonly name: string;
  /** The family's report on each seed, in the order the seeds were given. */
  readonly perSeed: readonly FileReport[];
  /** Calls saved on failed runs, ours / 3-identical, over the seeds where either saved any. */
  readonly savedVsThree: Spread | null;
  /** The same for the stops after the failed runs' honest prefixes; null if a prefix is unknown. */
  readonly outsideHonestWorkVsThree: Spread | null;
  readonly held: TargetsHeld;
}

/** The spread of one family across its seeds, for detector `ours` beside the 3-identical rule. */
export function familySpread(name: string, perSeed: readonly FileReport[], ours: string): FamilySpread {
  const saved: number[] = [];
  const outside: number[] = [];
  let outsideKnown = perSeed.length > 0;
  let allCaught = 0;
  let wastedMedianZero = 0;
  let falseStopsAtMostThree = 0;
  let savedAtTarget = 0;
  for (const file of perSeed) {
    const lg = rowOf(file, ours);
    const three = rowOf(file, THREE);
    if (lg === undefined || three === undefined)
      throw new RangeError(`${file.name}: no row for "${lg === undefined ? ours : THREE}"`);
    const r = ratio(lg.callsSavedUnsuccessful, three.callsSavedUnsuccessful);
    if (r !== null) saved.push(r);
    const [o, t] = [savedOutsideHonestWork(lg), savedOutsideHonestWork(three)];
    if (o === null || t === null) outsideKnown = false;
    else {
      const ro = ratio(o, t);
      if (ro !== null) outside.push(ro);
    }
    if (lg.stuckCaught === lg.stuckRuns) allCaught++;
    if ((lg.wastedMedian ?? 0) === 0) wastedMedianZero++;
    if (lg.falseStops <= three.falseStops) falseStopsAtMostThree++;
    if (lg.callsSavedUnsuccessful >= TARGET_SAVED_VS_THREE * three.callsSavedUnsuccessful) savedAtTarget++;
  }
  return {
    name,
    perSeed,
    savedVsThree: spread(saved),
    outsideHonestWorkVsThree: outsideKnown ? spread(outside) : null,
    held: { seeds: perSeed.length, allCaught, wastedMedianZero, falseStopsAtMostThree, savedAtTarget },
  };
}

const HEADER = [
  'source',
  'seeds',
  'saved vs 3 id.: median (min-max)',
  'outside honest work vs 3 id.: same',
  `seeds holding: all caught / wasted p50 0 / false stops <= 3 id. / saved >= ${TARGET_SAVED_VS_THREE}x 3 id.`,
] as const;

const cell = (s: Spread | null) =>
  s === null ? '-' : `${formatRatio(s.median)} (${formatRatio(s.min)}-${formatRatio(s.max)})`;

/** One aligned line per family: its spread across the seeds; `synthetic` marks every source so. */
export function formatSeedSpread(spreads: readonly FamilySpread[], synthetic: boolean): string {
  const rows = spreads.map((f) => {
    const h = f.held;
    const of = (n: number) => `${n}/${h.seeds}`;
    return [
      `${f.name}${synthetic ? ' (synthetic)' : ''}`,
      String(h.seeds),
      cell(f.savedVsThree),
      cell(f.outsideHonestWorkVsThree),
      [h.allCaught, h.wastedMedianZero, h.falseStopsAtMostThree, h.savedAtTarget].map(of).join(' / '),
    ];
  });
  return `${table(HEADER, rows)}\n`;
}
