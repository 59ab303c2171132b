import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { initialState, type RunState, resolvePolicy } from '../src/domain/index.js';
import { foldRun, ManualClock, RunActor } from '../src/machines/index.js';
import { type Bench, type BenchResult, result } from './bench-result.js';
import { defaults, deps } from './synthetic.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function heapAfterGc(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/** Heap bytes per live run: a started XState actor per run, against the bare domain state of a started run. */
function perRun(n: number): { actor: number; state: number } {
  const policy = resolvePolicy(defaults);
  const clock = new ManualClock(0);
  const before = heapAfterGc();
  const actors: RunActor[] = [];
  for (let i = 0; i < n; i++) {
    const a = new RunActor(`run-${i}`, deps, clock);
    const r = a.propose({ type: 'StartRun', runId: `run-${i}`, policy });
    if (!r.ok) throw r.error;
    a.commit(r.value);
    actors.push(a);
  }
  const actor = (heapAfterGc() - before) / n;
  actors.length = 0;
  const base = heapAfterGc();
  const states: RunState[] = [];
  for (let i = 0; i < n; i++) {
    const runId = `run-${i}`;
    states.push(
      foldRun(initialState(runId), {
        eventId: `${runId}/1`,
        runId,
        seq: 1,
        atMs: 0,
        event: {
          type: 'RunStarted',
          runId,
          taskType: null,
          tenant: null,
          policy,
          progressVersion: 0,
          meta: {},
          parentRunId: null,
        },
      }),
    );
  }
  const state = (heapAfterGc() - base) / n;
  if (states.length !== n) throw new Error('unreachable');
  return { actor, state };
}

export const memoryBench: Bench = {
  name: 'memory',
  async run() {
    const out: BenchResult[] = [];
    for (const n of [10_000, 100_000]) {
      const { actor, state } = perRun(n);
      out.push(result(`memory-${n}-runs`, 'bytes/run', actor, 'domain RunState alone', state));
    }
    return out;
  },
};
