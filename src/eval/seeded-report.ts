/**
 * The synthetic families drawn from several seeds, in the order given: per family the runs of every
 * seed pooled, and how its figures spread across the seeds (seed-spread.ts). Twin stops are found
 * within one family on one seed, as for a single draw.
 */
import type { Detector } from './detector.js';
import {
  detectorNames,
  type EvalFile,
  type EvalReport,
  type JudgedFile,
  judgeFile,
  poolFiles,
  TOTALS_NAME,
} from './report.js';
import { type FamilySpread, familySpread } from './seed-spread.js';

export interface SeededReport {
  readonly seeds: readonly number[];
  /** Per family, the runs of every seed pooled; totals pool every family on every seed. */
  readonly pooled: EvalReport;
  /** Per family, then all families together, across the seeds. */
  readonly spreads: readonly FamilySpread[];
}

/** The same runs, their ids prefixed with the seed: pooled seeds reuse run ids (false stops name them). */
function seeded(file: JudgedFile, seed: number): JudgedFile {
  return {
    report: file.report,
    judged: file.judged.map((runs) => runs.map((run) => ({ ...run, runId: `seed ${seed}: ${run.runId}` }))),
  };
}

/**
 * Every family `filesFor(seed)` gives, on each seed, through every detector; `ours` is the detector
 * judged against the 3-identical rule in the spreads. Each seed must give the same families in the
 * same order.
 */
export function evaluateSeeds(
  seeds: readonly number[],
  filesFor: (seed: number) => readonly EvalFile[],
  detectors: readonly Detector[],
  ours = 'loopguard',
): SeededReport {
  if (seeds.length === 0) throw new RangeError('no seeds to draw the synthetic families from');
  const repeated = seeds.find((seed, i) => seeds.indexOf(seed) !== i);
  if (repeated !== undefined) throw new RangeError(`seed ${repeated} is given twice`);
  const names = detectorNames(detectors);
  const bySeed = seeds.map((seed) => filesFor(seed).map((file) => seeded(judgeFile(file, detectors), seed)));
  const families = (bySeed[0] ?? []).map((file) => file.report.name);
  for (const [s, files] of bySeed.entries()) {
    const got = files.map((file) => file.report.name);
    if (got.join('\n') !== families.join('\n'))
      throw new RangeError(
        `seed ${seeds[s]} gives the families ${got.join(', ')}, not ${families.join(', ')}`,
      );
  }
  const perFamily = families.map((_, f) => bySeed.map((files) => files[f] as JudgedFile));
  const seedTotals = bySeed.map((files) => poolFiles(TOTALS_NAME, names, files));
  const reports = (files: readonly JudgedFile[]) => files.map((file) => file.report);
  return {
    seeds,
    pooled: {
      detectors: names,
      files: families.map((name, f) => poolFiles(name, names, perFamily[f] ?? []).report),
      totals: poolFiles(TOTALS_NAME, names, seedTotals).report,
    },
    spreads: [
      ...families.map((name, f) => familySpread(name, reports(perFamily[f] ?? []), ours)),
      familySpread(TOTALS_NAME, reports(seedTotals), ours),
    ],
  };
}
