import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { GuardedCalls } from '../src/adapters/guarded-calls.js';
import { createGuard, type Guard } from '../src/runtime/index.js';

let dataDir: string;
let guard: Guard;
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'lg-guarded-calls-'));
  guard = await createGuard({
    dataDir,
    policy: { stepTimeoutMs: 50, tools: { charge_card: { sideEffect: true } } },
  });
});
afterEach(async () => {
  await guard.close();
  await rm(dataDir, { recursive: true, force: true });
});

const operationKey = (tool: string, args: Record<string, unknown>) =>
  tool === 'charge_card' ? `acme:charge:${String(args.order)}` : undefined;

describe('GuardedCalls: decide in a hook, execute later', () => {
  it('an allowed call runs in its execute, and the run takes the next decision only after it', async () => {
    const calls = new GuardedCalls(await guard.startRun({ runId: 'held' }));
    expect(await calls.decide('c1', 'search_docs', { q: 'a' })).toBeNull();
    expect(calls.holding).toBe(true);
    const r = await calls.execute('c1', 'search_docs', { q: 'a' }, () => 'found a');
    expect(r).toMatchObject({ status: 'executed', value: 'found a' });
    expect(calls.holding).toBe(false);
  });

  it('an allowed call whose execute never comes is recorded not run at the step timeout, and a late execute is a call decided anew', async () => {
    const run = await guard.startRun({ runId: 'abandoned' });
    const calls = new GuardedCalls(run, { operationKey });
    expect(await calls.decide('c1', 'charge_card', { order: 'A1' })).toBeNull();
    // The 50 ms step timeout ends the held call; how soon its record is written follows the machine.
    await vi.waitFor(() => expect(calls.holding).toBe(false), { timeout: 10_000, interval: 20 });
    // The tool never started: nothing in doubt, the run goes on (WAITING its 0 ms retry at most).
    expect(run.state.status).not.toBe('NEEDS_HUMAN');
    expect(Object.values(run.state.operations).map((o) => o.status)).not.toContain('in_doubt');
    let charged = 0;
    const late = await calls.execute('c1', 'charge_card', { order: 'A1' }, () => ++charged);
    expect(late.status).toBe('executed');
    expect(charged).toBe(1);
  });

  it('a completed side effect decided again is answered from the ledger without running', async () => {
    const calls = new GuardedCalls(await guard.startRun({ runId: 'cached' }), { operationKey });
    let charged = 0;
    expect(await calls.decide('c1', 'charge_card', { order: 'A1' })).toBeNull();
    await calls.execute('c1', 'charge_card', { order: 'A1' }, () => ({ payment: ++charged }));
    expect(await calls.decide('c2', 'charge_card', { order: 'A1' })).toMatchObject({ status: 'cached' });
    const again = await calls.execute('c2', 'charge_card', { order: 'A1' }, () => ({ payment: ++charged }));
    expect(again).toMatchObject({ status: 'cached', value: { payment: 1 } });
    expect(charged).toBe(1);
  });

  it('a call decided twice before its execute is allowed once and runs once', async () => {
    const calls = new GuardedCalls(await guard.startRun({ runId: 'twice' }));
    expect(await calls.decide('c1', 'search_docs', { q: 'a' })).toBeNull();
    expect(await calls.decide('c1', 'search_docs', { q: 'a' })).toBeNull();
    let searches = 0;
    await calls.execute('c1', 'search_docs', { q: 'a' }, () => ++searches);
    expect(searches).toBe(1);
    expect(calls.holding).toBe(false);
  });

  it('given a call id reused for a second call of the same tool, when both execute, then each runs with its own tool and gets its own result', async () => {
    const calls = new GuardedCalls(await guard.startRun({ runId: 'reused-same-tool' }));
    expect(await calls.decide('call_0', 'search_docs', { q: 'refund' })).toBeNull();
    // The framework asked its hook for the first call only; both execute at once.
    const [first, second] = await Promise.all([
      calls.execute('call_0', 'search_docs', { q: 'refund' }, () => 'doc refund'),
      calls.execute('call_0', 'search_docs', { q: 'shipping' }, () => 'doc shipping'),
    ]);
    expect(first).toMatchObject({ status: 'executed', value: 'doc refund' });
    expect(second).toMatchObject({ status: 'executed', value: 'doc shipping' });
    expect(calls.holding).toBe(false);
  });

  it("a call id reused for another tool is neither run nor answered under the first call's decision", async () => {
    const calls = new GuardedCalls(await guard.startRun({ runId: 'reused' }), { operationKey });
    const reused = { code: 'invalid_call', details: { field: 'toolCallId' } };
    let charged = 0;
    let searched = 0;
    expect(await calls.decide('call_0', 'search_docs', { q: 'refund' })).toBeNull();
    // A model that numbers its calls per step: the charge was never decided.
    await expect(calls.decide('call_0', 'charge_card', { order: 'A1' })).rejects.toMatchObject(reused);
    await expect(
      calls.execute('call_0', 'charge_card', { order: 'A1' }, () => ++charged),
    ).rejects.toMatchObject(reused);
    expect(
      await calls.execute('call_0', 'search_docs', { q: 'refund' }, () => `doc ${++searched}`),
    ).toMatchObject({
      status: 'executed',
      value: 'doc 1',
    });
    // A cached answer is kept for its own tool alone.
    await calls.execute('c1', 'charge_card', { order: 'A1' }, () => ({ payment: ++charged }));
    expect(await calls.decide('c2', 'charge_card', { order: 'A1' })).toMatchObject({ status: 'cached' });
    await expect(calls.execute('c2', 'search_docs', { q: 'x' }, () => ++searched)).rejects.toMatchObject(
      reused,
    );
    expect(await calls.execute('c2', 'charge_card', { order: 'A1' }, () => ++charged)).toMatchObject({
      status: 'cached',
      value: { payment: 1 },
    });
    expect({ charged, searched }).toEqual({ charged: 1, searched: 1 });
  });
});
