/**
 * guarded-call-durable: a guarded call as a user feels it on the embedded default (the SQLite
 * store, synchronous=FULL), durable before the tool runs (createGuard, a no-op tool), and the same
 * for a side effect (its ledger claim and completion are durable writes of their own), against the
 * physical floor measured in the same process: one 400-byte write + fdatasync through node:fs,
 * one of each in turn. Each figure is the median of TRIALS trials (each on a fresh data dir);
 * min and max go to the log.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout } from 'node:timers/promises';
import { createGuard } from '../src/runtime/index.js';
import { type Bench, percentile, result } from './bench-result.js';
import { argsOf, unbounded } from './synthetic.js';
import { describeTrials, trials } from './trials.js';

const WARMUP = 50;
const CALLS = 400;
const TRIALS = 5;

/** One 400-byte write + fdatasync at the end of a file of its own, `n` times: microseconds each. */
export async function floorWrites(dir: string, n: number): Promise<number[]> {
  const fh = await open(join(dir, `floor-${process.pid}.bin`), 'w');
  const block = Buffer.alloc(400, 7);
  const out: number[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      await fh.write(block, 0, block.length, i * block.length);
      await fh.datasync();
      out.push((performance.now() - t0) * 1000);
    }
  } finally {
    await fh.close();
  }
  return out;
}

/**
 * `sideEffect`: each call a side effect under its own operation key (a charge), claimed in the
 * ledger before it runs and completed there after: more durable writes than a read-only call.
 */
async function trial(
  dir: string,
  sideEffect: boolean,
): Promise<{ p50: number; p99: number; f50: number; f99: number }> {
  const guard = await createGuard({ policy: unbounded, dataDir: join(dir, 'data'), secretKey: 'bench' });
  const run = await guard.startRun({ runId: 'durable' });
  const fh = await open(join(dir, 'floor.bin'), 'w');
  const block = Buffer.alloc(400, 7);
  const ours: number[] = [];
  const floor: number[] = [];
  let position = 0;
  try {
    // One of each in turn, so a burst of I/O from elsewhere on the machine hits both alike.
    for (let i = 0; i < WARMUP + CALLS; i++) {
      const t0 = performance.now();
      const r = await run.call(
        sideEffect
          ? { tool: 'charge', args: argsOf(i), sideEffect: true, operationKey: `order-${i}` }
          : { tool: 'search', args: argsOf(i) },
        () => 'ok',
      );
      const called = performance.now();
      if (r.status !== 'executed') throw new Error(`call ${i} was ${r.status}`);
      // A side effect's ledger copies are written after the call returns, on this thread (SQLite is
      // synchronous): let them finish, or the floor write below would wait for their fsync.
      if (sideEffect) await setTimeout(5);
      const t1 = performance.now();
      await fh.write(block, 0, block.length, position);
      await fh.datasync();
      const t2 = performance.now();
      position += block.length;
      if (i < WARMUP) continue;
      ours.push((called - t0) * 1000);
      floor.push((t2 - t1) * 1000);
    }
  } finally {
    await fh.close();
    await guard.close();
  }
  return {
    p50: percentile(ours, 50),
    p99: percentile(ours, 99),
    f50: percentile(floor, 50),
    f99: percentile(floor, 99),
  };
}

export const guardedCallDurableBench: Bench = {
  name: 'guarded-call-durable',
  async run(ctx) {
    const out = [];
    for (const sideEffect of [false, true]) {
      const runs: Awaited<ReturnType<typeof trial>>[] = [];
      for (let t = 0; t < TRIALS; t++) {
        const dir = mkdtempSync(join(tmpdir(), 'lg-bench-durable-'));
        try {
          runs.push(await trial(dir, sideEffect));
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      }
      const [p50, p99, f50, f99] = (['p50', 'p99', 'f50', 'f99'] as const).map((k) =>
        trials(runs.map((r) => r[k])),
      ) as [
        ReturnType<typeof trials>,
        ReturnType<typeof trials>,
        ReturnType<typeof trials>,
        ReturnType<typeof trials>,
      ];
      const what = sideEffect ? 'side-effect call' : 'guarded call';
      ctx.log(`  ${CALLS} ${what}s and as many floor writes per trial, after a warm-up of ${WARMUP}`);
      ctx.log(describeTrials(`${what} p50`, 'us', p50));
      ctx.log(describeTrials(`${what} p99`, 'us', p99));
      ctx.log(describeTrials('floor p50', 'us', f50));
      ctx.log(describeTrials('floor p99', 'us', f99));
      const base = '400-byte write + fdatasync, same process';
      const name = sideEffect ? 'guarded-call-durable-side-effect' : 'guarded-call-durable';
      out.push(
        result(`${name} p50`, 'us', p50.median, base, f50.median),
        result(`${name} p99`, 'us', p99.median, base, f99.median),
      );
    }
    return out;
  },
};
