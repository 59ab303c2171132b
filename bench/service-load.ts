/**
 * Drives round trips the way agents drive the guard: `runs` runs at once, each making its calls
 * one after the other, and reports the rate and the latency of single round trips.
 */
import { percentile } from './bench-result.js';
import { type CpuReading, cpuMeter } from './process-cpu.js';

/** One round trip for a run: resolves when its answer is back. */
export type RoundTrip = (runKey: string, step: number) => Promise<void>;

export interface LoadFigures {
  readonly perSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly count: number;
  /** CPU per round trip of the processes asked for, when they were measured (process-cpu.ts). */
  readonly cpu?: CpuReading;
}

export async function drive(
  roundTrip: RoundTrip,
  runs: number,
  stepsPerRun: number,
  label: string,
  cpuOf: Readonly<Record<string, number>> = {},
): Promise<LoadFigures> {
  const latencies: number[] = [];
  const meter = Object.keys(cpuOf).length === 0 ? undefined : cpuMeter(cpuOf);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: runs }, async (_, r) => {
      for (let s = 0; s < stepsPerRun; s++) {
        const t = performance.now();
        await roundTrip(`${label}-${r}`, s);
        latencies.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpu = meter?.stop(latencies.length);
  return {
    ...(cpu === undefined ? {} : { cpu }),
    perSecond: latencies.length / seconds,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    count: latencies.length,
  };
}

/** `trials` runs of a load one after the other: the figure is their median, with min and max. */
export async function trialsOf(
  trials: number,
  load: (trial: number) => Promise<LoadFigures>,
): Promise<LoadFigures[]> {
  const out: LoadFigures[] = [];
  for (let t = 0; t < trials; t++) out.push(await load(t));
  return out;
}
