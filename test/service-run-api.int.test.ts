/**
 * The remote client's run API beyond calls, on the real broker: model usage counts toward the
 * run's budgets in the worker as in the library (the next call is stopped once tokens run out),
 * the stop report names the last checkpoint the client recorded, and a person's settle of an
 * in-doubt side effect frees it to run again after the approved resume, and one operation key
 * asked by two runs runs once: the shared ledger, as in the library.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_POLICY } from '../src/domain/index.js';
import { inProcessService } from './support/service/in-process-service.js';

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
});
