import type { TraceCall, TraceRun } from '../../trace/trace-run.js';
import { labelRun, type RunLabels } from '../labels.js';
import { AssistantLog, ERROR_STYLES } from './assistant-log.js';
import { ASSISTANT_STUCK, ASSISTANT_WORKING } from './assistant-shapes.js';
import { syntheticRun } from './harness.js';
import { Prng } from './prng.js';

type Shape = (log: AssistantLog, rng: Prng) => void;

const ASSISTANT_SEED = 24;
const WORKING_PER_SHAPE = 20;
const STUCK_PER_SHAPE = 5;
export const ASSISTANT_FAMILY = 'synthetic-assistant';

export interface LabelledRuns {
  readonly name: typeof ASSISTANT_FAMILY;
  readonly runs: TraceRun[];
  /** Ground truth from the generator: the labels' rules on the answers without their volatile parts. */
  readonly labels: RunLabels[];
  /** How many calls of each stuck run (by run id) are its honest prefix; the calls after it are the loop. */
  readonly honestPrefixes: ReadonlyMap<string, number>;
}

/**
 * The tool-using assistant family, from one seed: each working shape, and each stuck shape after
 * an honest prefix (a working run cut short), every run with its own wording of failures. The
 * labels are the README's rules applied to the answers as the generator made them before adding
 * their volatile parts: a repeated failure whose counter moves is stuck, as a person would say.
 */
export function syntheticAssistantRuns(seed: number = ASSISTANT_SEED): LabelledRuns {
  const rng = new Prng(seed);
  const runs: TraceRun[] = [];
  const labels: RunLabels[] = [];
  const honestPrefixes = new Map<string, number>();
  const add = (id: string, log: AssistantLog, success: boolean) => {
    const run = (calls: TraceCall[]) => syntheticRun(id, calls, success, 'task done');
    runs.push(run(log.calls.map((c) => c.call)));
    labels.push(labelRun(run(log.calls.map((c) => ({ ...c.call, result_sha256: `stable:${c.stable}` })))));
  };
  const working = Object.entries(ASSISTANT_WORKING) as [string, Shape][];
  for (const [name, shape] of working) {
    for (let i = 0; i < WORKING_PER_SHAPE; i++) {
      const log = new AssistantLog(rng.pick(ERROR_STYLES));
      shape(log, rng);
      add(`synthetic/assistant/${name}/${i}`, log, true);
    }
  }
  for (const [name, shape] of Object.entries(ASSISTANT_STUCK) as [string, Shape][]) {
    for (let i = 0; i < STUCK_PER_SHAPE; i++) {
      const log = new AssistantLog(rng.pick(ERROR_STYLES));
      const [, prefix] = rng.pick(working);
      prefix(log, rng);
      const cut = rng.int(2, log.calls.length - 1);
      log.calls.splice(cut);
      shape(log, rng);
      const id = `synthetic/assistant/stuck-${name}/${i}`;
      add(id, log, false);
      honestPrefixes.set(id, cut);
    }
  }
  return { name: ASSISTANT_FAMILY, runs, labels, honestPrefixes };
}
