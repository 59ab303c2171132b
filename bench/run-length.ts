import { resolvePolicy } from '../src/domain/index.js';
import { ManualClock, RunActor } from '../src/machines/index.js';
import { type Bench, type BenchResult, result } from './bench-result.js';
import { deps, guardedCall, unbounded } from './synthetic.js';

const TOTAL_CALLS = 20_000;

/** Mean microseconds per guarded call over runs of `length` calls, TOTAL_CALLS calls in all. */
function perCall(length: number): number {
  const policy = resolvePolicy(unbounded);
  let spent = 0;
  for (let r = 0; r < TOTAL_CALLS / length; r++) {
    const clock = new ManualClock(0);
    const actor = new RunActor(`run-${r}`, deps, clock);
    const start = actor.propose({ type: 'StartRun', runId: `run-${r}`, policy });
    if (!start.ok) throw start.error;
    actor.commit(start.value);
    const t0 = performance.now();
    for (let i = 0; i < length; i++) {
      clock.advance(1);
      guardedCall(actor, i);
    }
    spent += performance.now() - t0;
    if (actor.state.steps !== length) throw new Error(`run of ${length} ended early: ${actor.state.status}`);
  }
  return (spent * 1000) / TOTAL_CALLS;
}

/** State is bounded by the window, not the history: a call costs the same at call 10 and at call 10,000. */
export const runLengthBench: Bench = {
  name: 'run-length',
  async run() {
    perCall(100); // warm-up
    const lengths = [10, 100, 1_000, 10_000];
    const costs = lengths.map(perCall);
    const base = costs[0] ?? Number.NaN;
    return lengths.map(
      (n, i): BenchResult =>
        result(`run-length-${n}`, 'us/call', costs[i] ?? Number.NaN, 'run-length-10', base),
    );
  },
};
