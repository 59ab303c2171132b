/**
 * The guard as a service (`loopguard serve`), on the real broker, each figure against a bare
 * echo round trip (kafka-echo.ts) measured in the same run:
 *
 * - serve-decisions-Nw: decisions/s with 1, 2 and 3 worker processes, 100 runs at once, each
 *   request waiting for its decision before the next (start, then tool call / tool result pairs),
 *   against the echo's round trips/s at the same concurrency; each the median of three trials (min and max beside it).
 * - serve-latency p50/p99: one run's request-to-decision time, one request at a time, against
 *   the echo's single round trip.
 * - serve-failover: SIGKILL of the worker owning the most partitions -> the first decision for a
 *   run it owned, against the session timeout (the group notices a dead member only after it).
 */
import { randomUUID } from 'node:crypto';
import { type Bench, type BenchResult, result, resultOfTrials } from './bench-result.js';
import { guardTrip } from './guard-trip.js';
import { startEcho } from './kafka-echo.js';
import { benchGuard, SESSION_TIMEOUT_MS, startWorkers, stopWorkers } from './serve-workers.js';
import { drive, type RoundTrip, trialsOf } from './service-load.js';

const PARTITIONS = 6;
const RUNS = 100;
const STEPS = 21;
const SEQUENTIAL = 200;
const TRIALS = 3;

export const serviceBench: Bench = {
  name: 'serve',
  ownTrials: true,
  async run(ctx): Promise<BenchResult[]> {
    const target = await ctx.kafka();
    const echo = await startEcho(target, PARTITIONS);
    const echoLoad = await trialsOf(TRIALS, (t) => drive(echo.roundTrip, RUNS, STEPS, `echo-${t}`));
    const echoSeq = await drive(echo.roundTrip, 1, SEQUENTIAL, 'echo-seq');
    await echo.close();
    ctx.log(
      `bench: echo ${echoLoad.map((l) => Math.round(l.perSecond)).join(' / ')} round trips/s at ${RUNS} at once; single p50 ${echoSeq.p50Ms.toFixed(1)} ms`,
    );
    const out: BenchResult[] = [];
    for (const n of [1, 2, 3]) {
      const prefix = `bench-serve-${randomUUID().slice(0, 8)}.`;
      const workers = await startWorkers(target, prefix, n, PARTITIONS);
      const guard = await benchGuard(target, prefix);
      try {
        const lastWorker = new Map<string, string>();
        const trip = guardTrip(guard, lastWorker);
        const load = await trialsOf(TRIALS, (t) => drive(trip, RUNS, STEPS, `load-${n}-${t}`));
        for (const l of load)
          ctx.log(
            `bench: serve ${n} worker(s): ${Math.round(l.perSecond)} decisions/s, p50 ${l.p50Ms.toFixed(1)} ms, p99 ${l.p99Ms.toFixed(1)} ms under load`,
          );
        out.push(
          resultOfTrials(
            `serve-decisions-${n}w (${RUNS} runs at once)`,
            'decisions/s',
            load.map((l, i) => ({
              value: l.perSecond,
              baseline_value: echoLoad[i]?.perSecond ?? Number.NaN,
            })),
            `echo round trips/s, ${RUNS} at once`,
          ),
        );
        if (n === 1) {
          const seq = await drive(trip, 1, SEQUENTIAL, 'seq');
          out.push(
            result(
              'serve-latency p50 (one request at a time)',
              'ms',
              seq.p50Ms,
              'echo round trip p50',
              echoSeq.p50Ms,
            ),
          );
          out.push(result('serve-latency p99', 'ms', seq.p99Ms, 'echo round trip p99', echoSeq.p99Ms));
        }
        if (n === 3) out.push(await failover(workers, lastWorker, trip));
      } finally {
        await guard.close();
        await stopWorkers(workers);
      }
    }
    return out;
  },
};

/** Kills the busiest worker, then times the first decision for a run it was serving. */
async function failover(
  workers: Awaited<ReturnType<typeof startWorkers>>,
  lastWorker: Map<string, string>,
  trip: RoundTrip,
): Promise<BenchResult> {
  const victim = workers.reduce((a, b) => (b.assigned().length > a.assigned().length ? b : a));
  const moved = [...lastWorker].find(([, w]) => w.endsWith(`/${victim.pid}`))?.[0];
  if (moved === undefined) throw new Error('bench: no run was served by the worker to kill');
  const t0 = performance.now();
  victim.child.kill('SIGKILL');
  await trip(moved, STEPS);
  const ms = performance.now() - t0;
  return result(
    'serve-failover (SIGKILL -> first decision for a moved run)',
    'ms',
    ms,
    'session timeout',
    SESSION_TIMEOUT_MS,
  );
}
