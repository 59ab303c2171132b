/**
 * The remote client's run API beyond calls, on the real broker: model usage counts toward the
 * run's budgets in the worker as in the library (the next call is stopped once tokens run out),
 * the stop report names the last checkpoint the client recorded, and a person's settle of an
 * in-doubt side effect frees it to run again after the approved resume, and one operation key
 * asked by two runs runs once: the shared ledger, as in the library. An operator's reissue lets a
 * done side effect run once more under a new key, and a reissue published again keeps its answer,
 * also when another worker decides the repeat.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_POLICY } from '../src/domain/index.js';
import { GuardWorker } from '../src/service/guard-worker.js';
import { emptyRequest, type WireRequest } from '../src/service/service-topics.js';
import { inProcessService } from './support/service/in-process-service.js';
import { SERVICE_SECRET_KEY } from './support/service/serve-process.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

describe('loopguard serve: model usage and checkpoints from a remote client', () => {
  it('counts usage toward the token budget and names the checkpoint in the stop report', async () => {
    const { guard } = await inProcessService('usage', cleanups, {
      policy: { ...DEFAULT_POLICY, maxTokens: 1_000 },
    });

    const run = await guard.startRun({ runId: 'agent-1' });
    const first = await run.call({ tool: 'search', args: { q: 'a' } }, () => ({ hits: 1 }));
    expect(first.status).toBe('executed');
    expect(await run.checkpoint('after-search')).toBe('after-search');
    await run.recordModelUsage({ tokensIn: 900, tokensOut: 200, costUsd: 0.03 });
    expect(run.state.status).toBe('RUNNING');
    let ran = false;
    const next = await run.call({ tool: 'search', args: { q: 'b' } }, () => {
      ran = true;
      return { hits: 2 };
    });
    expect(ran).toBe(false);
    expect(next.status).toBe('stopped');
    expect(run.state.report).toMatchObject({ lastSafeCheckpoint: 'after-search' });
    expect(run.state.report?.spend).toMatchObject({ tokens: 1_100, costUsd: 0.03 });
    await expect(run.checkpoint('  ')).rejects.toMatchObject({ details: { field: 'checkpoint_id' } });
  }, 120_000);

  it('settles an in-doubt side effect: it certainly did not happen, so it runs after the resume', async () => {
    const { guard } = await inProcessService('settle', cleanups);

    const run = await guard.startRun({ runId: 'payer-1' });
    const charge = { tool: 'charge', args: { amount: 10 }, operationKey: 'charge-1', sideEffect: true };
    // The provider never answered: the client reports the charge in doubt.
    const call = await run.send('TOOL_CALL', {
      tool: charge.tool,
      args_json: JSON.stringify(charge.args),
      operation_key: charge.operationKey,
      side_effect: true,
    });
    expect(call.decision).toBe('execute');
    await run.send('TOOL_RESULT', { call_id: call.request_id, result_kind: 'RETRYABLE', in_doubt: true });
    expect(run.state.status).toBe('NEEDS_HUMAN');
    await run.settle('charge-1', { happened: false, settledBy: 'ops' });
    await guard.resume('payer-1', { preconditionChange: 'the provider shows no charge', approvedBy: 'ops' });
    let charged = 0;
    const again = await run.call(charge, () => ({ charged: ++charged }));
    expect(again.status).toBe('executed');
    expect(charged).toBe(1);
    await expect(run.settle('charge-1', { happened: true, settledBy: ' ' })).rejects.toMatchObject({
      details: { field: 'settled_by' },
    });
  }, 120_000);

  it("runs a side effect once across runs: the second run gets the first one's result", async () => {
    const { guard } = await inProcessService('cross', cleanups);

    let charged = 0;
    const pay = { tool: 'charge', args: { invoice: 7 }, operationKey: 'invoice-7', sideEffect: true };
    const fn = () => ({ receipt: `r-${++charged}` });
    const first = await (await guard.startRun({ runId: 'agent-a' })).call(pay, fn);
    // Another agent's run (its own partition, most likely), the same invoice.
    const second = await (await guard.startRun({ runId: 'agent-b' })).call(pay, fn);
    expect(first).toMatchObject({ status: 'executed', value: { receipt: 'r-1' } });
    expect(second).toMatchObject({ status: 'cached', value: { receipt: 'r-1' } });
    expect(charged).toBe(1);
  }, 120_000);

  it('reissues a done side effect: it runs once more under the new key; a used key is refused', async () => {
    const { guard, conn, worker, topicPrefix } = await inProcessService('reissue', cleanups);

    const run = await guard.startRun({ runId: 'refunder-1' });
    let refunds = 0;
    const refund = () => ({ refund: ++refunds });
    const first = await run.call(
      { tool: 'refund', args: { o: 4 }, operationKey: 'refund-4', sideEffect: true },
      refund,
    );
    const again = { tool: 'refund', args: { o: 4, n: 2 }, sideEffect: true };
    const cached = await run.call({ ...again, operationKey: 'refund-4' }, refund);
    const note = await run.reissue('refund-4', 'refund-4#2', { reason: 'charged twice', approvedBy: 'ops' });
    const second = await run.call({ ...again, operationKey: 'refund-4#2' }, refund);

    expect(first).toMatchObject({ status: 'executed', value: { refund: 1 } });
    expect(cached).toMatchObject({ status: 'cached', value: { refund: 1 } });
    expect(note).toMatchObject({
      oldKey: 'refund-4',
      newKey: 'refund-4#2',
      reason: 'charged twice',
      approvedBy: 'ops',
      by: { runId: 'refunder-1' },
    });
    expect(second).toMatchObject({ status: 'executed', value: { refund: 2 } });
    expect(refunds).toBe(2);
    await expect(run.reissue('refund-4', 'refund-4#2', { reason: 'once more' })).rejects.toMatchObject({
      code: 'reissue_refused',
      message: expect.stringContaining('already in use'),
    });
    await expect(run.reissue(' ', 'refund-4#3', { reason: 'x' })).rejects.toMatchObject({
      code: 'bad_request',
      details: { field: 'operation_key' },
    });
    await expect(
      run.reissue('refund-4', 'refund-4#3', { reason: 42 as unknown as string }),
    ).rejects.toMatchObject({ code: 'bad_request', details: { field: 'reason' } });

    // Published again (same request id): the answer it got, from the worker's memory, then from
    // the ledger's note once another worker holds the run.
    const req: WireRequest = {
      ...emptyRequest(randomUUID(), 'refunder-1', 'REISSUE', Date.now()),
      operation_key: 'refund-4#2',
      new_operation_key: 'refund-4#3',
      reason: 'charged three times',
    };
    const d = await guard.request(req);
    expect(d).toMatchObject({ decision: 'recorded', error_code: null });
    expect(await guard.request(req)).toEqual(d);
    await worker.stop();
    const next = await GuardWorker.start({
      ...conn,
      secretKey: SERVICE_SECRET_KEY,
      groupId: `g-${topicPrefix}`,
      workerId: 'w-reissue-next',
    });
    cleanups.push(() => next.stop());
    const repeat = await guard.request(req);
    expect(repeat).toEqual({ ...d, worker: 'w-reissue-next', decided_at_ms: repeat.decided_at_ms });
  }, 180_000);
});
