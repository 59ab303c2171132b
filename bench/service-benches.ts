/**
 * The guard as a service (`loopguard serve`), on the real broker, each figure against an echo
 * round trip (kafka-echo.ts) measured in the same run: the echo that commits each batch's offsets
 * as kafkajs does by default (what the targets were set against), and for the figures marked
 * "vs bare" the echo without offset commits, the floor of a round trip through a consumer group:
 *
 * - serve-decisions-Nw: decisions/s with 1, 2 and 3 worker processes, 100 runs at once, each
 *   request waiting for its decision before the next (start, then tool call / tool result pairs),
 *   against the echo's round trips/s at the same concurrency; each the median of three trials (min and max beside it).
 * - serve-latency p50/p99: one run's request-to-decision time, one request at a time, against
 *   the echo's single round trip.
 * - the load curve, 1 worker, 25 / 50 / 100 / 200 runs at once (about the same number of requests
 *   at each): decisions/s against the echo at the same concurrency, and p50 / p99 against the
 *   one-at-a-time figures (latency under load should stay near them until the worker saturates).
 * - serve-cpu: CPU per decision of the worker, the bench's client and the broker (process-cpu.ts;
 *   the broker's when the bench knows its process), one at a time and along the curve, against the
 *   bare echo's CPU per round trip: on one machine, what bounds the load figures.
 * - serve-failover: SIGKILL of the worker owning the most partitions -> the first decision for a
 *   run it owned, against the session timeout (the group notices a dead member only after it).
 */
import { randomUUID } from 'node:crypto';
import { type Bench, type BenchResult, result, resultOfTrials } from './bench-result.js';
import { guardTrip } from './guard-trip.js';
import { startEcho } from './kafka-echo.js';
import { describeCpu } from './process-cpu.js';
import { benchGuard, SESSION_TIMEOUT_MS, startWorkers, stopWorkers } from './serve-workers.js';
import { drive, type LoadFigures, type RoundTrip, trialsOf } from './service-load.js';

const PARTITIONS = 6;
const RUNS = 100;
const STEPS = 21;
const CURVE = [25, 50, 100, 200];
/** An odd number of steps (start, then call/result pairs) for about RUNS * STEPS requests at each load. */
const stepsAt = (runs: number): number => 2 * Math.round((RUNS * STEPS) / runs / 2) + 1;
const SEQUENTIAL = 200;
const TRIALS = 3;

export const serviceBench: Bench = {
  name: 'serve',
  ownTrials: true,
  async run(ctx): Promise<BenchResult[]> {
    const target = await ctx.kafka();
    const echo = await startEcho(target, PARTITIONS, { commits: true });
    const echoCurve = new Map<number, LoadFigures[]>();
    for (const runs of CURVE)
      echoCurve.set(
        runs,
        await trialsOf(TRIALS, (t) => drive(echo.roundTrip, runs, stepsAt(runs), `echo-${runs}-${t}`)),
      );
    const echoSeq = await drive(echo.roundTrip, 1, SEQUENTIAL, 'echo-seq');
    await echo.close();
    for (const [runs, l] of echoCurve)
      ctx.log(
        `bench: echo ${l.map((x) => Math.round(x.perSecond)).join(' / ')} round trips/s at ${runs} at once`,
      );
    ctx.log(`bench: echo single p50 ${echoSeq.p50Ms.toFixed(1)} ms`);
    const broker: Record<string, number> = target.brokerPid === undefined ? {} : { broker: target.brokerPid };
    const echoCpu = { 'client and echo': process.pid, ...broker };
    const bare = await startEcho(target, PARTITIONS, { commits: false });
    const bareLoad = await trialsOf(TRIALS, (t) =>
      drive(bare.roundTrip, RUNS, stepsAt(RUNS), `bare-${t}`, echoCpu),
    );
    const bareSeq = await drive(bare.roundTrip, 1, SEQUENTIAL, 'bare-seq', echoCpu);
    await bare.close();
    ctx.log(
      `bench: bare echo ${bareLoad.map((x) => Math.round(x.perSecond)).join(' / ')} round trips/s at ${RUNS} at once, single p50 ${bareSeq.p50Ms.toFixed(1)} ms`,
    );
    for (const l of [...bareLoad, bareSeq])
      if (l.cpu)
        ctx.log(
          `bench: bare echo CPU per round trip at ${l === bareSeq ? 1 : RUNS} at once: ${describeCpu(l.cpu)}`,
        );
    const out: BenchResult[] = [];
    const curve: { runs: number; load: LoadFigures[] }[] = [];
    for (const n of [1, 2, 3]) {
      const prefix = `bench-serve-${randomUUID().slice(0, 8)}.`;
      const workers = await startWorkers(target, prefix, n, PARTITIONS);
      const guard = await benchGuard(target, prefix);
      try {
        const lastWorker = new Map<string, string>();
        const trip = guardTrip(guard, lastWorker);
        // The curve's CPU: one worker, so every decision's cost is in the three processes.
        const cpuOf = n === 1 ? { worker: workers[0]?.pid ?? 0, client: process.pid, ...broker } : {};
        for (const runs of n === 1 ? CURVE : [RUNS]) {
          const load = await trialsOf(TRIALS, (t) =>
            drive(trip, runs, stepsAt(runs), `load-${n}-${runs}-${t}`, cpuOf),
          );
          for (const l of load)
            ctx.log(
              `bench: serve ${n} worker(s), ${runs} runs at once: ${Math.round(l.perSecond)} decisions/s, p50 ${l.p50Ms.toFixed(1)} ms, p99 ${l.p99Ms.toFixed(1)} ms${l.cpu ? `; CPU per decision: ${describeCpu(l.cpu)}` : ''}`,
            );
          out.push(
            resultOfTrials(
              `serve-decisions-${n}w (${runs} runs at once)`,
              'decisions/s',
              load.map((l, i) => ({
                value: l.perSecond,
                baseline_value: echoCurve.get(runs)?.[i]?.perSecond ?? Number.NaN,
              })),
              `echo round trips/s, ${runs} at once`,
            ),
          );
          if (n === 1) curve.push({ runs, load });
        }
        if (n === 1) {
          const seq = await drive(trip, 1, SEQUENTIAL, 'seq', cpuOf);
          if (seq.cpu)
            ctx.log(`bench: serve one request at a time, CPU per decision: ${describeCpu(seq.cpu)}`);
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
          out.push(
            result(
              'serve-latency p50 (one request at a time) vs bare',
              'ms',
              seq.p50Ms,
              'bare echo round trip p50 (no offset commits)',
              bareSeq.p50Ms,
            ),
          );
          const at = curve.find((c) => c.runs === RUNS)?.load ?? [];
          out.push(
            resultOfTrials(
              `serve-decisions-1w (${RUNS} runs at once) vs bare`,
              'decisions/s',
              at.map((l, i) => ({
                value: l.perSecond,
                baseline_value: bareLoad[i]?.perSecond ?? Number.NaN,
              })),
              `bare echo round trips/s, ${RUNS} at once (no offset commits)`,
            ),
          );
          for (const { runs, load } of curve)
            for (const [p, of] of [
              ['p50', (l: LoadFigures) => l.p50Ms],
              ['p99', (l: LoadFigures) => l.p99Ms],
            ] as const)
              out.push(
                resultOfTrials(
                  `serve-latency ${p}, 1 worker, ${runs} runs at once`,
                  'ms',
                  load.map((l) => ({ value: of(l), baseline_value: p === 'p50' ? seq.p50Ms : seq.p99Ms })),
                  `${p} one request at a time`,
                ),
              );
          out.push(...cpuRows(curve, seq, bareLoad, bareSeq));
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

/**
 * CPU per decision of the worker, the bench's client and the broker together (when the bench knows
 * the broker's process), against the bare echo's per round trip (its client and echo, and the
 * broker): on one machine, what a load figure can reach is bounded by it. Absent without /proc.
 */
function cpuRows(
  curve: readonly { runs: number; load: readonly LoadFigures[] }[],
  seq: LoadFigures,
  bareLoad: readonly LoadFigures[],
  bareSeq: LoadFigures,
): BenchResult[] {
  const names = (l: LoadFigures | undefined) => Object.keys(l?.cpu?.perUnitMs ?? {}).join(' + ');
  const out: BenchResult[] = [];
  if (seq.cpu && bareSeq.cpu)
    out.push(
      result(
        `serve-cpu per decision (one request at a time: ${names(seq)})`,
        'ms',
        seq.cpu.totalPerUnitMs,
        `bare echo CPU per round trip, one at a time (${names(bareSeq)})`,
        bareSeq.cpu.totalPerUnitMs,
      ),
    );
  for (const { runs, load } of curve) {
    if (load.some((l) => l.cpu === undefined) || bareLoad.some((l) => l.cpu === undefined)) continue;
    out.push(
      resultOfTrials(
        `serve-cpu per decision, 1 worker, ${runs} runs at once`,
        'ms',
        load.map((l, i) => ({
          value: l.cpu?.totalPerUnitMs ?? Number.NaN,
          baseline_value: bareLoad[i]?.cpu?.totalPerUnitMs ?? Number.NaN,
        })),
        `bare echo CPU per round trip, ${RUNS} at once (${names(bareLoad[0])})`,
      ),
    );
  }
  return out;
}

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
