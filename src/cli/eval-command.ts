import { cachedDiceSimilarity, LoopguardError } from '../domain/index.js';
import {
  defaultBaselines,
  evaluate,
  evaluateSeeds,
  formatSeedSpread,
  formatSummary,
  formatTable,
  loopguardDetector,
} from '../eval/index.js';
import { DEFAULT_SYNTHETIC_SEEDS, syntheticFiles } from '../eval/synthetic/synthetic-files.js';
import { nodeHashing } from '../runtime/node-hashing.js';
import type { Io } from './io.js';
import { jsonLine } from './json-output.js';
import { readPolicyFile } from './policy-file.js';
import { parseSeedList } from './seed-list.js';
import { readTraceFiles } from './trace-files.js';

/**
 * eval records nothing: the keyed hash only has to keep equal values equal within this process,
 * so a fixed key gives nothing away.
 */
const EVAL_KEY = 'loopguard-eval-records-nothing';

export interface EvalOptions {
  readonly policy?: string;
  readonly json?: boolean;
  readonly synthetic?: boolean;
  readonly seeds?: string;
}

/**
 * `loopguard eval FILE.jsonl... [--synthetic [--seeds LIST]] [--policy P.json] [--json]`: loopguard
 * and the baselines side by side on recorded runs, and with `--synthetic` separately on the seeded
 * synthetic families (never pooled with the recordings: they are ours, not a sample), each drawn
 * from every seed of the list (DEFAULT_SYNTHETIC_SEEDS unless given): the runs of all seeds pooled
 * per family, then each family's spread across the seeds.
 */
export function evalCommand(paths: readonly string[], opts: EvalOptions, io: Io): number {
  if (opts.seeds !== undefined && !opts.synthetic)
    throw new LoopguardError('usage', 'eval: --seeds draws the synthetic families; give --synthetic too');
  const seeds = opts.seeds === undefined ? DEFAULT_SYNTHETIC_SEEDS : parseSeedList(opts.seeds);
  const policy = readPolicyFile(opts.policy).policy;
  const { files, errors } = readTraceFiles(paths);
  for (const e of errors) io.err(`rejected: ${e.message}`);
  const detectors = [
    loopguardDetector(policy, { hashing: nodeHashing(EVAL_KEY), similarity: cachedDiceSimilarity() }),
    ...defaultBaselines(),
  ];
  const print = (report: ReturnType<typeof evaluate>, synthetic: boolean) =>
    io.out(
      opts.json
        ? jsonLine(report)
        : `${formatTable(report)}\nPer source, beside the one-line rules and the step caps:\n\n${formatSummary(report, synthetic)}`,
    );
  if (files.length > 0) print(evaluate(files, detectors), false);
  if (opts.synthetic) {
    const seeded = evaluateSeeds(seeds, syntheticFiles, detectors);
    if (opts.json) io.out(jsonLine(seeded));
    else {
      io.out(
        `\nSynthetic runs (every family drawn from seeds ${seeds.join(', ')}; src/eval/synthetic), scored apart, ` +
          'the runs of all seeds pooled per family:\n\n',
      );
      print(seeded.pooled, true);
      io.out(
        `\nAcross the seeds, per family: loopguard's calls saved on failed runs as a multiple of the 3-identical rule's,\n` +
          'in all and outside honest work, median (min-max), and on how many seeds each target held:\n\n' +
          formatSeedSpread(seeded.spreads, true),
      );
    }
  }
  return errors.length > 0 ? 1 : 0;
}
