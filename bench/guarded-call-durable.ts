/**
 * guarded-call-durable: a guarded call as a user feels it on the embedded default, durable before
 * the tool runs (createGuard, fsync on, a no-op tool), against the physical floor measured in the
 * same process: one 400-byte write + fdatasync through the same node:fs API the log uses, one of
 * each in turn.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGuard } from '../src/runtime/index.js';
import { type Bench, percentile, result } from './bench-result.js';
import { argsOf, unbounded } from './synthetic.js';

const WARMUP = 50;
const CALLS = 600;

export const guardedCallDurableBench: Bench = {
  name: 'guarded-call-durable',
  async run(ctx) {
    const dir = mkdtempSync(join(tmpdir(), 'lg-bench-durable-'));
    try {
      const guard = await createGuard({ policy: unbounded, dataDir: join(dir, 'data') });
      const run = await guard.startRun({ runId: 'durable' });
      const fh = await open(join(dir, 'floor.bin'), 'w');
      const block = Buffer.alloc(400, 7);
      const ours: number[] = [];
      const floor: number[] = [];
      let calls = 0;
      let position = 0;
      // One of each in turn, so a burst of I/O from elsewhere on the machine hits both alike.
      for (let i = 0; i < WARMUP + CALLS; i++) {
        const t0 = performance.now();
        const r = await run.call({ tool: 'search', args: argsOf(calls++) }, () => 'ok');
        const t1 = performance.now();
        if (r.status !== 'executed') throw new Error(`call ${calls} was ${r.status}`);
        await fh.write(block, 0, block.length, position);
        await fh.datasync();
        const t2 = performance.now();
        position += block.length;
        if (i < WARMUP) continue;
        ours.push((t1 - t0) * 1000);
        floor.push((t2 - t1) * 1000);
      }
      await fh.close();
      await guard.close();
      ctx.log(`  ${ours.length} guarded calls, ${floor.length} floor writes, after a warm-up of ${WARMUP}`);
      const base = '400-byte write + fdatasync, same process';
      return [
        result('guarded-call-durable p50', 'us', percentile(ours, 50), base, percentile(floor, 50)),
        result('guarded-call-durable p99', 'us', percentile(ours, 99), base, percentile(floor, 99)),
      ];
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
