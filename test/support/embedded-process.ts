/**
 * A child process of the many-processes-one-data-dir tests: `node --import tsx
 * embedded-process.ts '<json job>'`. Every mode opens the default embedded store of `dataDir`.
 *
 * - `call`: a guard run calls `pay` under `operationKey` after `go` on stdin (so all call at
 *   once); prints `result <json>`; after `look` prints `ledger <json>` (what its ledger says then).
 * - `kill-before-tool`: the execute decision is recorded, then the tool's first act is to print
 *   `in-tool` and hang, so the test SIGKILLs the process between the append and the side effect.
 * - `append`: appends `count` events to run `runId`, each at the seq it last read; on `conflict`
 *   it counts, re-reads and tries again. Waits for `go` before the first. Prints `done <json>`.
 * - `runs`: records `count` guarded runs of its own (ids `<runId>-<n>`) and prints `done`.
 */
import { createInterface } from 'node:readline';
import { EmbeddedLog } from '../../src/log/embedded/embedded-log.js';
import { SqliteSchemaStore } from '../../src/log/embedded/sqlite-schema-store.js';
import { EventStore } from '../../src/log/event-store.js';
import { createGuard, SqliteLedger } from '../../src/runtime/index.js';
import { hit } from './faults/counter.js';
import { runEvents } from './run-events.js';

interface Job {
  readonly mode: 'call' | 'kill-before-tool' | 'append' | 'runs';
  readonly dataDir: string;
  readonly runId: string;
  readonly operationKey?: string;
  readonly counter?: string;
  readonly count?: number;
}

const job = JSON.parse(process.argv[2] ?? '{}') as Job;
const say = (line: string) => process.stdout.write(`${line}\n`);
const lines = createInterface({ input: process.stdin });
const heard = (word: string) =>
  new Promise<void>((resolve) => {
    lines.on('line', (l) => {
      if (l === word) resolve();
    });
  });
const POLICY = { tools: { pay: { sideEffect: true } } };
const pay = (key: string) => ({ tool: 'pay', args: { order: 'A1' }, sideEffect: true, operationKey: key });

if (job.mode === 'call' || job.mode === 'kill-before-tool') {
  const guard = await createGuard({ dataDir: job.dataDir, policy: POLICY, secretKey: 'test-key' });
  const run = await guard.startRun({ runId: job.runId });
  const key = job.operationKey as string;
  if (job.mode === 'kill-before-tool') {
    say(`pid ${process.pid}`);
    await run.call(pay(key), () => {
      say('in-tool');
      return new Promise(() => undefined);
    });
  } else {
    const go = heard('go');
    const look = heard('look');
    say('ready');
    await go;
    const r = await run.call(pay(key), async () => {
      hit(job.counter as string, job.runId);
      // Long enough that the other processes' claims arrive while this one is in flight.
      await new Promise((resolve) => setTimeout(resolve, 300));
      return { paymentId: `p-${job.runId}` };
    });
    say(`result ${JSON.stringify({ status: r.status, value: 'value' in r ? r.value : null })}`);
    await look;
    const ledger = SqliteLedger.open(job.dataDir);
    say(`ledger ${JSON.stringify(await ledger.get(key))}`);
    await ledger.close();
    await guard.close();
    lines.close();
  }
} else if (job.mode === 'append') {
  const log = await EmbeddedLog.open(job.dataDir);
  const schemas = new SqliteSchemaStore(job.dataDir);
  const stream = log.runStream(await EventStore.create(log, schemas));
  const go = heard('go');
  let head = (await stream.readStream(job.runId)).length;
  say('ready');
  await go;
  let conflicts = 0;
  const mine: string[] = [];
  for (let n = 0; n < (job.count ?? 1); ) {
    const [event] = runEvents(job.runId, head, 1);
    const e = { ...(event as NonNullable<typeof event>), eventId: `${process.pid}/${n}` };
    try {
      await stream.appendToStream(job.runId, [e], { expectedStreamVersion: head });
      mine.push(e.eventId);
      head++;
      n++;
    } catch (err) {
      if ((err as { code?: string }).code !== 'conflict') throw err;
      conflicts++;
      head = (await stream.readStream(job.runId)).length;
    }
  }
  say(`done ${JSON.stringify({ conflicts, mine })}`);
  await schemas.close();
  await log.close();
  lines.close();
} else {
  const guard = await createGuard({ dataDir: job.dataDir, secretKey: 'test-key' });
  for (let n = 0; n < (job.count ?? 1); n++) {
    const run = await guard.startRun({ runId: `${job.runId}-${n}` });
    for (const q of ['a', 'b', 'c']) await run.call({ tool: 'search', args: { q } }, () => `found ${q}`);
  }
  await guard.close();
  say('done');
  lines.close();
}
