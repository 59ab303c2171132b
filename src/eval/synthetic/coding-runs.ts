import type { TraceRun } from '../../trace/trace-run.js';
import {
  boilerplateEdits,
  debugPrint,
  flipFlop,
  installRetry,
  longRun,
  type Project,
  pollAndPage,
  project,
  revertAndCompare,
  scratchScripts,
} from './coding-shapes.js';
import { CallLog, HARNESSES, syntheticRun } from './harness.js';
import { Prng } from './prng.js';
import { rephraseSearch, rereadFile, rerunUnchanged, rewriteAndRun, sameEdit } from './stuck-shapes.js';

type Shape = (log: CallLog, rng: Prng, p: Project) => void;

/** Runs that succeed: a guard that stops one of them is in the way. */
const WORKING: Readonly<Record<string, Shape>> = {
  'boilerplate-edits': boilerplateEdits,
  'flip-flop': flipFlop,
  'revert-and-compare': revertAndCompare,
  'scratch-scripts': scratchScripts,
  'poll-and-page': pollAndPage,
  'debug-print': debugPrint,
  'install-retry': installRetry,
  'long-run': (log, rng, p) => longRun(log, rng, p, rng.int(30, 150)),
};

/** Runs that get stuck after some honest work: each must be stopped. */
const STUCK: Readonly<Record<string, Shape>> = {
  'rerun-unchanged': rerunUnchanged,
  'same-edit': sameEdit,
  'rewrite-and-run': rewriteAndRun,
  'reread-file': rereadFile,
  'rephrase-search': rephraseSearch,
};

const SYNTHETIC_SEED = 11;
/** Per harness: runs of each working shape, and of each stuck shape. */
const WORKING_PER_SHAPE = 10;
const STUCK_PER_SHAPE = 4;

/**
 * The synthetic coding-agent run set: every shape through every harness, from one seed. Working
 * runs are recorded as successful, stuck ones as failed; a stuck run's honest prefix is a working
 * run cut short, so the guard sees the loop only after a history like the real one.
 */
export function syntheticCodingRuns(seed: number = SYNTHETIC_SEED): TraceRun[] {
  return syntheticCodingFiles(seed).flatMap((file) => file.runs);
}

/**
 * The synthetic runs grouped by harness, for an evaluation that reports each and their total. Each
 * carries how many calls of each stuck run are its honest prefix (the working run it begins with,
 * cut short): the calls after it are the loop, what a guard could save without stopping honest work.
 */
export function syntheticCodingFiles(
  seed: number = SYNTHETIC_SEED,
): { name: string; runs: TraceRun[]; honestPrefixes: ReadonlyMap<string, number> }[] {
  const rng = new Prng(seed);
  const honest = new Map<string, number>();
  const working = Object.entries(WORKING);
  return HARNESSES.map((harness) => {
    const runs: TraceRun[] = [];
    for (const [name, shape] of working) {
      for (let i = 0; i < WORKING_PER_SHAPE; i++) {
        const log = new CallLog(harness);
        shape(log, rng, project(rng));
        runs.push(syntheticRun(`synthetic/${harness.name}/${name}/${i}`, log.calls, true, 'tests pass'));
      }
    }
    for (const [name, shape] of Object.entries(STUCK)) {
      for (let i = 0; i < STUCK_PER_SHAPE; i++) {
        const log = new CallLog(harness);
        const p = project(rng);
        const [, prefix] = rng.pick(working);
        prefix(log, rng, p);
        const cut = rng.int(3, log.calls.length - 1);
        log.calls.splice(cut);
        shape(log, rng, p);
        const id = `synthetic/${harness.name}/stuck-${name}/${i}`;
        runs.push(syntheticRun(id, log.calls, false, 'tests pass'));
        honest.set(id, cut);
      }
    }
    return { name: `synthetic-${harness.name}`, runs, honestPrefixes: honest };
  });
}
