/**
 * CPU time of processes over a stretch of a benchmark, and how busy the machine was meanwhile:
 * what the service benchmarks use to say what bounds a load figure (a round trip's cost is spread
 * over the client, the worker and the broker, three processes on the same cores).
 *
 * Read from Linux's /proc: a process's utime + stime in clock ticks (USER_HZ, 100 on every Linux
 * this runs on), so a reading is good to about 10 ms per process and is only meaningful over
 * thousands of round trips. Elsewhere there is no meter and the figures are left out.
 */
import { existsSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { procStatFields } from '../infra/proc.js';

const TICK_MS = 10;

export interface CpuReading {
  /** CPU milliseconds per unit (a decision, a round trip), by process. */
  readonly perUnitMs: Readonly<Record<string, number>>;
  /** Their sum. */
  readonly totalPerUnitMs: number;
  /** Share of all the machine's cores busy meanwhile (any process), 0 to 1. */
  readonly machineBusy: number;
}

export interface CpuMeter {
  stop(units: number): CpuReading;
}

function processTicks(pid: number): number {
  const fields = procStatFields(pid);
  return Number(fields[11]) + Number(fields[12]); // utime + stime
}

function machineTicks(): { busy: number; all: number } {
  const cpu = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '')
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  const all = cpu.reduce((a, b) => a + b, 0);
  // idle and iowait
  return { busy: all - (cpu[3] ?? 0) - (cpu[4] ?? 0), all };
}

/** Starts measuring the given processes; undefined where /proc is not there to read. */
export function cpuMeter(pids: Readonly<Record<string, number>>): CpuMeter | undefined {
  if (!existsSync('/proc/stat')) return undefined;
  const start = Object.entries(pids).map(([name, pid]) => [name, pid, processTicks(pid)] as const);
  const machine = machineTicks();
  return {
    stop(units) {
      const perUnitMs = Object.fromEntries(
        start.map(([name, pid, t0]) => [name, ((processTicks(pid) - t0) * TICK_MS) / units]),
      );
      const now = machineTicks();
      return {
        perUnitMs,
        totalPerUnitMs: Object.values(perUnitMs).reduce((a, b) => a + b, 0),
        // /proc/stat's first line sums every core, so the share is already per core count.
        machineBusy: now.all === machine.all ? 0 : (now.busy - machine.busy) / (now.all - machine.all),
      };
    },
  };
}

/** "worker 0.21, client 0.10, broker 0.22 ms; machine 83% busy (2 cores)" */
export function describeCpu(r: CpuReading): string {
  const parts = Object.entries(r.perUnitMs).map(([name, ms]) => `${name} ${ms.toFixed(2)}`);
  return `${parts.join(', ')} ms; machine ${Math.round(r.machineBusy * 100)}% busy (${cpus().length} cores)`;
}
