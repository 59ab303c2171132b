/**
 * A child of the guarded-call-processes bench: `node guarded-call-worker.js <data dir> <run id>
 * <calls>`. Opens the embedded default on the shared data dir, makes a warm-up, says `ready`,
 * waits for `go` on stdin, times `calls` guarded calls and prints their microseconds as JSON.
 */
import { createInterface } from 'node:readline';
import { createGuard } from '../src/runtime/index.js';
import { argsOf, unbounded } from './synthetic.js';

const [dataDir, runId, callsText] = process.argv.slice(2);
const calls = Number(callsText);
const guard = await createGuard({ policy: unbounded, dataDir: dataDir as string, secretKey: 'bench' });
const run = await guard.startRun({ runId: runId as string });
let i = 0;
const call = async (): Promise<number> => {
  const t0 = performance.now();
  const r = await run.call({ tool: 'search', args: argsOf(i++) }, () => 'ok');
  if (r.status !== 'executed') throw new Error(`call ${i} was ${r.status}`);
  return (performance.now() - t0) * 1000;
};
for (let w = 0; w < 30; w++) await call();
const lines = createInterface({ input: process.stdin });
const go = new Promise<void>((resolve) => lines.on('line', (l) => l === 'go' && resolve()));
process.stdout.write('ready\n');
await go;
const times: number[] = [];
for (let c = 0; c < calls; c++) times.push(await call());
process.stdout.write(`${JSON.stringify(times)}\n`);
lines.close();
await guard.close();
