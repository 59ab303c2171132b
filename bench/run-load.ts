/**
 * run-load: what loading one run costs (Guard.resume's path: read the run's stream from seq 1,
 * fold it into a RunActor) as the log around it grows. The embedded log holds the target run
 * (40 calls, half written before the other runs and half after) among 2,000, 20,000 and 200,000
 * events of other runs; each figure is the median of 200 loads on the open log (the three logs
 * loaded in turn), judged against the load from the smallest log measured in the same run.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RecordedEvent } from '../src/domain/index.js';
import { MemorySchemaStore } from '../src/events/index.js';
import { EmbeddedLog, EventStore } from '../src/log/index.js';
import { ManualClock, RunActor } from '../src/machines/index.js';
import type { RunStream } from '../src/ports/index.js';
import { type Bench, percentile, result } from './bench-result.js';
import { sampleEvents } from './embedded-benches.js';
import { deps, searchRun, unbounded } from './synthetic.js';

const BASE = 2_000;
const LOADS = 200;
export const TARGET = 'bench/target';

export function targetRun(): readonly RecordedEvent[] {
  return searchRun(TARGET, 40, unbounded);
}

interface Loaded {
  readonly dir: string;
  readonly log: EmbeddedLog;
  readonly stream: RunStream;
}

/** An embedded log holding the target run among `others`: half of it before them, half after. */
async function fill(others: readonly RecordedEvent[], target: readonly RecordedEvent[]): Promise<Loaded> {
  const dir = mkdtempSync(join(tmpdir(), 'lg-bench-load-'));
  const log = await EmbeddedLog.open(dir, { fsync: 'none' });
  const events = await EventStore.create(log, new MemorySchemaStore());
  const half = Math.floor(target.length / 2);
  await events.append(target.slice(0, half));
  for (let i = 0; i < others.length; i += 5_000) await events.append(others.slice(i, i + 5_000));
  await events.append(target.slice(half));
  return { dir, log, stream: log.runStream(events) };
}

/** Microseconds to load the target run: its stream read from seq 1 and folded into an actor. */
async function loadOnce(l: Loaded, expected: number): Promise<number> {
  const t0 = performance.now();
  const actor = new RunActor(TARGET, deps, new ManualClock(0), await l.stream.readStream(TARGET));
  const us = (performance.now() - t0) * 1000;
  if (actor.state.seq !== expected) throw new Error(`loaded ${actor.state.seq} of ${expected}`);
  return us;
}

export const runLoadBench: Bench = {
  name: 'run-load',
  async run(ctx) {
    const target = targetRun();
    const costs: number[] = [];
    const all = sampleEvents(BASE * 100);
    ctx.log(`  target run: ${target.length} events; other runs: up to ${all.length} events`);
    const sizes = [BASE, BASE * 10, BASE * 100];
    const logs: Loaded[] = [];
    try {
      for (const n of sizes) logs.push(await fill(all.slice(0, n), target));
      // Round robin, after a warm-up round: load from elsewhere on the machine hits every size alike.
      const times: number[][] = sizes.map(() => []);
      for (let i = 0; i < LOADS + 20; i++)
        for (const [k, l] of logs.entries()) {
          const us = await loadOnce(l, target.length);
          if (i >= 20) times[k]?.push(us);
        }
      costs.push(...times.map((t) => percentile(t, 50)));
    } finally {
      for (const l of logs) {
        await l.stream.close();
        await l.log.close();
        rmSync(l.dir, { recursive: true, force: true });
      }
    }
    const base = costs[0] ?? Number.NaN;
    return sizes.map((n, i) =>
      result(`run-load-embedded-${n}`, 'us/load', costs[i] ?? Number.NaN, `run-load-embedded-${BASE}`, base),
    );
  },
};
