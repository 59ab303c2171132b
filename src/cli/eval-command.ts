import { cachedDiceSimilarity } from '../domain/index.js';
import { defaultBaselines, evaluate, formatSummary, formatTable, loopguardDetector } from '../eval/index.js';
import { SYNTHETIC_SEEDS, syntheticFiles } from '../eval/synthetic/synthetic-files.js';
import { nodeHashing } from '../runtime/node-hashing.js';
import type { Io } from './io.js';
import { jsonLine } from './json-output.js';
import { loadPolicy } from './policy-file.js';
import { readTraceFiles } from './trace-files.js';

/**
 * eval records nothing: the keyed hash only has to keep equal values equal within this process,
 * so a fixed key gives nothing away.
 */
const EVAL_KEY = 'loopguard-eval-records-nothing';

/**
 * `loopguard eval FILE.jsonl... [--synthetic] [--policy P.json] [--json]`: loopguard and the
 * baselines side by side on recorded runs, and with `--synthetic` separately on the seeded
 * synthetic families (never pooled with the recordings: they are ours, not a sample).
 */
export function evalCommand(
  paths: readonly string[],
  opts: { policy?: string; json?: boolean; synthetic?: boolean },
  io: Io,
): number {
  const policy = loadPolicy(opts.policy);
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
  if (files.length > 0) {
    print(
      evaluate(
        files.map((f) => ({ name: f.name, runs: f.runs })),
        detectors,
      ),
      false,
    );
  }
  if (opts.synthetic) {
    if (!opts.json)
      io.out(
        `\nSynthetic runs (coding agent seed ${SYNTHETIC_SEEDS.coding}, assistant seed ${SYNTHETIC_SEEDS.assistant}; src/eval/synthetic), scored apart:\n\n`,
      );
    print(evaluate(syntheticFiles(), detectors), true);
  }
  return errors.length > 0 ? 1 : 0;
}
