/**
 * A worker process for the fault tests: `node --import tsx worker.ts '<json job>'`.
 *
 * - mode `claim`: starts its own run, says `ready`, waits for `go` on stdin (so all workers call
 *   at once), calls the side-effecting `pay` under the shared operation key and prints the status.
 * - mode `crash`: starts the run and calls `pay`; the tool does its side effect, prints
 *   `side-effect-done` and hangs, so the test can SIGKILL the process before the completion is
 *   recorded anywhere.
 */
import { createInterface } from 'node:readline';
import type { PolicyInput } from '../../../src/index.js';
import { type Backend, openGuard } from './backends.js';
import { hit } from './counter.js';

interface Job {
  readonly mode: 'claim' | 'crash';
  readonly backend: Backend;
  readonly runId: string;
  readonly operationKey: string;
  readonly counter: string;
  /** As the parent wrote it to JSON; createGuard validates it. */
  readonly policy: PolicyInput;
}

const job = JSON.parse(process.argv[2] ?? '{}') as Job;
const say = (line: string) => process.stdout.write(`${line}\n`);
const { guard, close } = await openGuard(job.backend, job.policy);
const run = await guard.startRun({ runId: job.runId });
const pay = {
  tool: 'pay',
  args: { order: 'A1', amount: 30 },
  sideEffect: true,
  operationKey: job.operationKey,
};

if (job.mode === 'claim') {
  say('ready');
  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) if (line === 'go') break;
  const r = await run.call(pay, async () => {
    hit(job.counter, job.runId);
    // Long enough that the other workers' claims arrive while this one is in flight.
    await new Promise((resolve) => setTimeout(resolve, 300));
    return { paymentId: `p-${job.runId}` };
  });
  say(`result ${JSON.stringify({ status: r.status, value: 'value' in r ? r.value : null })}`);
  lines.close();
  await close();
  // Every kafkajs client is disconnected here, yet under load kafkajs 2.2.4 sometimes keeps one
  // broker socket (and its request-queue timer) alive, and the process would never end. The
  // worker has said all it has to say, so it ends itself; a close that failed has thrown above.
  process.exit(0);
} else {
  say(`pid ${process.pid}`);
  await run.call(pay, async () => {
    hit(job.counter, job.runId);
    say('side-effect-done');
    return new Promise(() => undefined);
  });
}
