/**
 * serve-curve: the guard as a service (`loopguard serve`, one worker) as offered load rises:
 * 25, 50, 100 and 200 runs at once, each request waiting for its decision before the next. At
 * each level: decisions/s against the bare echo's round trips/s at the same concurrency, and the
 * request-to-decision p50 and p99 against the same worker's one-at-a-time figures (so the p50
 * ratio at 100 runs is the "latency under load near the one-at-a-time figure"). Each
 * level alternates echo and serve per trial, so a burst of load elsewhere moves both sides alike;
 * medians of three trials with min and max. A measurement only: it asserts nothing.
 */
import { randomUUID } from 'node:crypto';
import { type Bench, type BenchResult, resultOfTrials, type TrialSample } from './bench-result.js';
import { guardTrip } from './guard-trip.js';
import { startEcho } from './kafka-echo.js';
import { benchGuard, startWorkers, stopWorkers } from './serve-workers.js';
import { drive, type LoadFigures } from './service-load.js';

const PARTITIONS = 6;
const LEVELS = [25, 50, 100, 200];
/** Start, then ten tool call / result pairs per run. */
const STEPS = 21;
const SEQUENTIAL = 100;
const TRIALS = 3;

export const serveCurveBench: Bench = {
  name: 'serve-curve',
  ownTrials: true,
  async run(ctx): Promise<BenchResult[]> {
    const target = await ctx.kafka();
    const prefix = `bench-curve-${randomUUID().slice(0, 8)}.`;
    const echo = await startEcho(target, PARTITIONS);
    const workers = await startWorkers(target, prefix, 1, PARTITIONS);
    const guard = await benchGuard(target, prefix);
    try {
      const trip = guardTrip(guard, new Map());
      const single: LoadFigures[] = [];
      for (let t = 0; t < TRIALS; t++) single.push(await drive(trip, 1, SEQUENTIAL, `single-${t}`));
      const out: BenchResult[] = [];
      for (const runs of LEVELS) {
        const rate: TrialSample[] = [];
        const p50: TrialSample[] = [];
        const p99: TrialSample[] = [];
        for (let t = 0; t < TRIALS; t++) {
          const e = await drive(echo.roundTrip, runs, STEPS, `echo-${runs}-${t}`);
          const s = await drive(trip, runs, STEPS, `curve-${runs}-${t}`);
          const one = single[t] as LoadFigures;
          rate.push({ value: s.perSecond, baseline_value: e.perSecond });
          p50.push({ value: s.p50Ms, baseline_value: one.p50Ms });
          p99.push({ value: s.p99Ms, baseline_value: one.p99Ms });
          ctx.log(
            `  ${runs} runs at once, trial ${t + 1}: serve ${Math.round(s.perSecond)} decisions/s, p50 ${s.p50Ms.toFixed(1)} ms, p99 ${s.p99Ms.toFixed(1)} ms; echo ${Math.round(e.perSecond)} round trips/s; one at a time p50 ${one.p50Ms.toFixed(1)} ms`,
          );
        }
        out.push(
          resultOfTrials(
            `serve-curve ${runs} runs`,
            'decisions/s',
            rate,
            `echo round trips/s, ${runs} at once`,
          ),
          resultOfTrials(`serve-curve ${runs} runs p50`, 'ms', p50, 'serve p50, one request at a time'),
          resultOfTrials(`serve-curve ${runs} runs p99`, 'ms', p99, 'serve p99, one request at a time'),
        );
      }
      return out;
    } finally {
      await guard.close();
      await stopWorkers(workers);
      await echo.close();
    }
  },
};
