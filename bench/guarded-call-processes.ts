/**
 * guarded-call-processes: 4 processes guarding calls at once on one data dir (the embedded
 * default, each its own run, every call durable before its tool runs), the per-call p50 over
 * all of them against the floor of guarded-call-durable (one 400-byte write + fdatasync, measured
 * in this process right after). Median of TRIALS trials; min and max go to the log.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Bench, percentile, result } from './bench-result.js';
import { floorWrites } from './guarded-call-durable.js';
import { describeTrials, trials } from './trials.js';

const PROCESSES = 4;
const CALLS = 200;
const TRIALS = 3;
const WORKER = fileURLToPath(new URL('./guarded-call-worker.js', import.meta.url));

function worker(dataDir: string, runId: string) {
  const child = spawn(process.execPath, [WORKER, dataDir, runId, String(CALLS)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let out = '';
  const listeners: (() => void)[] = [];
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    for (const l of listeners) l();
  });
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  const lineWith = (test: (l: string) => boolean) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const hit = out.split('\n').find(test);
        if (hit !== undefined) resolve(hit);
      };
      listeners.push(check);
      check();
      void exited.then((code) => reject(new Error(`bench worker exited (${code}): ${out.slice(-500)}`)));
    });
  return { child, exited, lineWith };
}

async function trial(): Promise<{ p50: number; p99: number; floor: number; floor4: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'lg-bench-procs-'));
  try {
    const data = join(dir, 'data');
    const ws = Array.from({ length: PROCESSES }, (_, i) => worker(data, `proc-${i}`));
    await Promise.all(ws.map((w) => w.lineWith((l) => l === 'ready')));
    for (const w of ws) w.child.stdin.write('go\n');
    const times = (await Promise.all(ws.map((w) => w.lineWith((l) => l.startsWith('['))))).flatMap(
      (l) => JSON.parse(l) as number[],
    );
    for (const w of ws) w.child.stdin.end();
    await Promise.all(ws.map((w) => w.exited));
    const floor = percentile(await floorWrites(dir, CALLS), 50);
    // The same disk under the same number of durable writers: each its own file, all at once.
    for (let i = 0; i < PROCESSES; i++) mkdirSync(join(dir, `w${i}`));
    const together = await Promise.all(
      Array.from({ length: PROCESSES }, (_, i) => floorWrites(join(dir, `w${i}`), CALLS)),
    );
    return {
      p50: percentile(times, 50),
      p99: percentile(times, 99),
      floor,
      floor4: percentile(together.flat(), 50),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const guardedCallProcessesBench: Bench = {
  name: 'guarded-call-processes',
  async run(ctx) {
    const runs: Awaited<ReturnType<typeof trial>>[] = [];
    for (let t = 0; t < TRIALS; t++) runs.push(await trial());
    const p50 = trials(runs.map((r) => r.p50));
    const p99 = trials(runs.map((r) => r.p99));
    const floor = trials(runs.map((r) => r.floor));
    const floor4 = trials(runs.map((r) => r.floor4));
    ctx.log(`  ${PROCESSES} processes x ${CALLS} guarded calls at once on one data dir, per trial`);
    ctx.log(describeTrials('per-call p50', 'us', p50));
    ctx.log(describeTrials('per-call p99', 'us', p99));
    ctx.log(describeTrials('floor p50', 'us', floor));
    ctx.log(describeTrials(`floor p50, ${PROCESSES} writers at once`, 'us', floor4));
    const base = '400-byte write + fdatasync, one process alone';
    return [
      result(`guarded-call-${PROCESSES}-processes p50`, 'us', p50.median, base, floor.median),
      result(`guarded-call-${PROCESSES}-processes p99`, 'us', p99.median, base, floor.median),
      // A name of its own: figures group by name, and two baselines under one name mix their ratios.
      result(
        `guarded-call-${PROCESSES}-processes p50 vs ${PROCESSES} writers`,
        'us',
        p50.median,
        `400-byte write + fdatasync, ${PROCESSES} writers at once (own files)`,
        floor4.median,
      ),
    ];
  },
};
