import { diceSimilarity } from '../domain/index.js';
import { defaultBaselines, evaluate, formatTable, loopguardDetector } from '../eval/index.js';
import { nodeHashing } from '../runtime/node-hashing.js';
import type { Io } from './io.js';
import { loadPolicy } from './policy-file.js';
import { readTraceFiles } from './trace-files.js';

/**
 * eval records nothing: the keyed hash only has to keep equal values equal within this process,
 * so a fixed key gives nothing away.
 */
const EVAL_KEY = 'loopguard-eval-records-nothing';

/** `loopguard eval FILE.jsonl... [--policy P.json] [--json]`: loopguard and the baselines side by side. */
export function evalCommand(
  paths: readonly string[],
  opts: { policy?: string; json?: boolean },
  io: Io,
): number {
  const policy = loadPolicy(opts.policy);
  const { files, errors } = readTraceFiles(paths);
  for (const e of errors) io.err(`rejected: ${e.message}`);
  const detectors = [
    loopguardDetector(policy, { hashing: nodeHashing(EVAL_KEY), similarity: diceSimilarity }),
    ...defaultBaselines(),
  ];
  const report = evaluate(
    files.map((f) => ({ name: f.name, runs: f.runs })),
    detectors,
  );
  io.out(opts.json ? `${JSON.stringify(report)}\n` : formatTable(report));
  return errors.length > 0 ? 1 : 0;
}
