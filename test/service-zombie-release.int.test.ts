/**
 * A worker stalled inside a batch (here: in the decode of a TOOL_CALL, so the group drops it) wakes
 * after its successor decided `execute` for that call and the tool started. The zombie decides its
 * stale copy of the call (its transaction is then fenced): its claim is taken as won (the same
 * claim owner as the successor's), its decision is a stop (the run's wall clock passed while it
 * slept), and a stop gives the claim back. Before 2026-12-03 it gave it back at once, freeing the
 * key of the running charge, and another run charged again (reproduced by review); now claims are
 * given back only once the batch's transaction commits, which a zombie's never does.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, expect, it } from 'vitest';
import { DEFAULT_POLICY } from '../src/domain/index.js';
import { GuardWorker } from '../src/service/guard-worker.js';
import { openService } from '../src/service/open-service.js';
import { SERVICE_TOPICS, type WireRequest } from '../src/service/service-topics.js';
import { kafkaEnv } from './setup/kafka-env.js';
import { remoteClient } from './support/service/in-process-service.js';
import { SERVICE_SECRET_KEY } from './support/service/serve-process.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it('a fenced worker gives back no claim its successor let run', { timeout: 180_000 }, async () => {
  const { brokers, registryUrl } = kafkaEnv();
  const topicPrefix = `zrel-${randomUUID().slice(0, 8)}.`;
  const conn = await openService({ brokers, registryUrl, topicPrefix, partitions: 2 });
  cleanups.push(() => conn.close());
  const policy = { ...DEFAULT_POLICY, maxWallClockMs: 25_000 };

  // Worker A stalls in the decode of the first TOOL_CALL of `stallRun` until `wake`.
  let stallRun = '';
  let stalled: () => void = () => {};
  const reached = new Promise<void>((r) => {
    stalled = r;
  });
  let wake: () => void = () => {};
  const woken = new Promise<void>((r) => {
    wake = r;
  });
  const decode = conn.requests.decode.bind(conn.requests);
  const stalling = Object.create(conn.requests, {
    decode: {
      value: async (v: Buffer): Promise<WireRequest> => {
        const r = await decode(v);
        if (r.run_id === stallRun && r.type === 'TOOL_CALL') {
          stallRun = '';
          stalled();
          await woken;
        }
        return r;
      },
    },
  }) as typeof conn.requests;
  const worker = (workerId: string, requests = conn.requests) =>
    GuardWorker.start({
      ...conn,
      requests,
      policy,
      secretKey: SERVICE_SECRET_KEY,
      groupId: `g-${topicPrefix}`,
      workerId,
      sessionTimeoutMs: 6_000,
    });
  const a = await worker('w-A', stalling);
  cleanups.push(() => a.stop());
  const b = await worker('w-B');
  cleanups.push(() => b.stop());
  const balanced = () => a.stats.assigned.length === 1 && b.stats.assigned.length === 1;
  for (let i = 0; i < 300 && !balanced(); i++) await sleep(100);
  await sleep(2_000);
  expect(balanced()).toBe(true);
  // A run whose requests partition is A's.
  let runId = '';
  for (let i = 0; runId === ''; i++)
    if (a.stats.assigned.includes(await conn.log.partitionOfKey(SERVICE_TOPICS.requests, `run-${i}`)))
      runId = `run-${i}`;

  const guard = await remoteClient(topicPrefix, cleanups, { timeoutMs: 60_000, resends: 0 });
  const run = await guard.startRun({ runId });
  const started = Date.now();
  stallRun = runId;
  let executions = 0;
  let running = false;
  const charge = { tool: 'charge', args: { order: 'A1' }, operationKey: 'charge-A1', sideEffect: true };
  const first = run.call(charge, async () => {
    executions++;
    running = true;
    await sleep(30_000); // a slow provider: the claim is held all along
    running = false;
    return { charged: 'A1' };
  });
  await reached;
  // B takes the partition over, decides the call and the charge starts.
  for (let i = 0; i < 600 && !running; i++) await sleep(100);
  expect(running).toBe(true);
  // The run's wall clock passes while A sleeps; A then decides its copy of the call: a stop.
  await sleep(Math.max(0, 27_000 - (Date.now() - started)));
  wake();
  await sleep(4_000);
  expect(running).toBe(true);
  const other = await guard.startRun({ runId: `${runId}-other` });
  const second = await other.call(charge, async () => {
    executions++;
    return { charged: 'A1' };
  });
  expect(second.status).toBe('waiting');
  expect((await first).status).toBe('executed');
  expect(executions).toBe(1);
});
