/**
 * The library API on the embedded log: what run.call returns, what runs and what does not. The
 * pass condition is always the tool's own counter, not the status alone.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MemorySchemaStore } from '../src/events/memory-schema-store.js';
import type { PolicyInput } from '../src/index.js';
import type { LogRecord } from '../src/log/event-log.js';
import { MemoryLog } from '../src/log/memory-log.js';
import type { RunLog } from '../src/log/run-log.js';
import { ManualClock } from '../src/machines/manual-clock.js';
import {
  createGuard,
  type Guard,
  guardTools,
  outcome,
  SqliteLedger,
  toModelMessage,
} from '../src/runtime/index.js';

const dirs: string[] = [];
const guards: Guard[] = [];
afterEach(async () => {
  for (const g of guards.splice(0)) await g.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function guardWith(policy: PolicyInput = {}, clock?: ManualClock) {
  const dataDir = mkdtempSync(join(tmpdir(), 'loopguard-rt-'));
  dirs.push(dataDir);
  const guard = await createGuard({ policy, dataDir, ...(clock ? { clock } : {}) });
  guards.push(guard);
  return guard;
}

const counter = () => {
  const c = {
    n: 0,
    fn:
      (v: unknown = 'ok') =>
      async () => {
        c.n++;
        return v;
      },
  };
  return c;
};

describe('run.call', () => {
  it('executes, returns cached for a completed operation, and refuses a repeat', async () => {
    const run = await (await guardWith({ tools: { pay: { sideEffect: true } } })).startRun({ runId: 'r1' });
    const pay = counter();
    const req = { tool: 'pay', args: { order: 'A1' }, operationKey: 'acme:pay:A1' };
    expect(await run.call(req, pay.fn({ id: 'p-1' }))).toMatchObject({
      status: 'executed',
      value: { id: 'p-1' },
    });
    expect(await run.call(req, pay.fn({ id: 'p-2' }))).toMatchObject({
      status: 'cached',
      value: { id: 'p-1' },
    });
    expect(pay.n).toBe(1);
    const read = counter();
    const q = { tool: 'read', args: { path: 'a' } };
    await run.call(q, read.fn('same'));
    await run.call(q, read.fn('same'));
    const third = await run.call(q, read.fn('same'));
    expect(['refused', 'stopped']).toContain(third.status);
    expect(read.n).toBe(2);
  });

  it('waits during a retry backoff without running the tool', async () => {
    const clock = new ManualClock(1_000);
    const run = await (await guardWith({}, clock)).startRun({ runId: 'r-wait' });
    const flaky = counter();
    const req = { tool: 'fetch', args: { url: 'x' } };
    const first = await run.call(req, flaky.fn(outcome.retryable('rate_limited', { retryAfterMs: 5_000 })));
    expect(first).toMatchObject({ status: 'executed', decision: 'retry_after_backoff' });
    expect(await run.call(req, flaky.fn())).toMatchObject({ status: 'waiting', rule: 'backoff' });
    expect(flaky.n).toBe(1);
    clock.advance(5_000);
    expect(await run.call(req, flaky.fn('fine'))).toMatchObject({ status: 'executed', value: 'fine' });
    expect(flaky.n).toBe(2);
  });

  it('ends the planner once stopped: no later call of any tool executes', async () => {
    const run = await (await guardWith()).startRun({ runId: 'r-stop' });
    const tool = counter();
    const results = [];
    for (let i = 0; i < 6; i++) results.push(await run.call({ tool: 'ls', args: {} }, tool.fn('same')));
    const stoppedAt = results.findIndex((r) => r.status === 'stopped');
    expect(stoppedAt).toBeGreaterThan(0);
    const before = tool.n;
    const other = counter();
    const after = await run.call(
      { tool: 'write', args: { f: 1 }, sideEffect: true, operationKey: 'w1' },
      other.fn(),
    );
    expect(after.status).toBe('stopped');
    expect(toModelMessage(after)).toMatch(/No further tool call of this run will execute/);
    expect(tool.n).toBe(before);
    expect(other.n).toBe(0);
    expect(run.state.status).toBe('STOPPED_LOOP_GUARD');
  });

  it('aborts a tool at the step timeout and records a RETRYABLE timeout', async () => {
    const run = await (await guardWith({ stepTimeoutMs: 50 })).startRun({ runId: 'r-timeout' });
    let aborted = false;
    const r = await run.call({ tool: 'slow', args: {} }, (signal) => {
      return new Promise((resolve) => {
        signal.addEventListener('abort', () => {
          aborted = true;
          resolve('too late');
        });
      });
    });
    expect(r).toMatchObject({ status: 'executed', kind: 'RETRYABLE', code: 'timeout' });
    expect(aborted).toBe(true);
    expect(run.state.status).not.toBe('NEEDS_HUMAN');
  });

  it('puts a timed-out side effect in doubt: NEEDS_HUMAN with the operation named, never retried', async () => {
    const run = await (await guardWith({ stepTimeoutMs: 50 })).startRun({ runId: 'r-doubt' });
    const pay = counter();
    const req = { tool: 'pay', args: { o: 1 }, sideEffect: true, operationKey: 'acme:pay:1' };
    const hang = (signal: AbortSignal) => {
      pay.n++;
      return new Promise((resolve) => signal.addEventListener('abort', () => resolve(null)));
    };
    const r = await run.call(req, hang);
    expect(r).toMatchObject({ status: 'executed', code: 'timeout', decision: 'stop' });
    expect(run.state.status).toBe('NEEDS_HUMAN');
    expect(run.state.report?.inDoubtOperations).toEqual(['acme:pay:1']);
    expect(run.state.report?.unmetPrecondition).toMatch(/acme:pay:1/);
    expect((await run.call(req, hang)).status).toBe('stopped');
    expect(pay.n).toBe(1);
  });

  it('lets reconcile settle an in-doubt side effect on resume: cached, not run again', async () => {
    const guard = await guardWith({ stepTimeoutMs: 50 });
    const run = await guard.startRun({ runId: 'r-reconcile' });
    const pay = counter();
    const req = { tool: 'pay', args: { o: 2 }, sideEffect: true, operationKey: 'acme:pay:2' };
    await run.call(req, (signal) => {
      pay.n++;
      return new Promise((resolve) => signal.addEventListener('abort', () => resolve(null)));
    });
    await guard.resume('r-reconcile', { preconditionChange: 'provider asked', approvedBy: 'ops' });
    const reconcile = async () => ({ happened: true, result: { id: 'p-9' } });
    expect(await run.call(req, pay.fn(), { reconcile })).toMatchObject({
      status: 'cached',
      value: { id: 'p-9' },
    });
    expect(pay.n).toBe(1);
    expect(run.state.operations['acme:pay:2']?.status).toBe('completed');
  });

  it('runs an operation again only when reconcile says it never happened', async () => {
    const guard = await guardWith({ stepTimeoutMs: 50 });
    const run = await guard.startRun({ runId: 'r-unhappened' });
    const pay = counter();
    const req = { tool: 'pay', args: { o: 3 }, sideEffect: true, operationKey: 'acme:pay:3' };
    await run.call(req, () => Promise.reject(new Error('connection reset')));
    expect(run.state.status).toBe('NEEDS_HUMAN');
    await guard.resume('r-unhappened', { preconditionChange: 'provider has no record', approvedBy: 'ops' });
    const r = await run.call(req, pay.fn('paid'), { reconcile: async () => ({ happened: false }) });
    expect(r).toMatchObject({ status: 'executed', value: 'paid' });
    expect(pay.n).toBe(1);
  });

  it('counts recorded model usage toward the token budget', async () => {
    const run = await (await guardWith({ maxTokens: 1_000 })).startRun({ runId: 'r-tokens' });
    await run.recordModelUsage({ tokensIn: 900, tokensOut: 200, costUsd: 0.01 });
    const tool = counter();
    const r = await run.call({ tool: 'search', args: { q: 'x' } }, tool.fn());
    expect(r).toMatchObject({ status: 'stopped', rule: 'token_budget' });
    expect(tool.n).toBe(0);
    expect(run.state.report?.spend.tokens).toBe(1_100);
  });

  it('finishes COMPLETED when verified, PARTIAL with gaps otherwise, and cancels PARTIAL with the reason', async () => {
    const guard = await guardWith();
    expect((await (await guard.startRun({ runId: 'f1' })).finish({ verified: true })).status).toBe(
      'COMPLETED',
    );
    const partial = await (await guard.startRun({ runId: 'f2' })).finish({
      verified: false,
      gaps: ['no refund'],
    });
    expect(partial).toMatchObject({ status: 'PARTIAL', report: { gaps: ['no refund'] } });
    const cancelled = await (await guard.startRun({ runId: 'f3' })).cancel('user cancelled');
    expect(cancelled.status).toBe('PARTIAL');
    expect(cancelled.report?.message).toMatch(/user cancelled/);
  });

  it('fails closed: when the log rejects an append, the tool never runs', async () => {
    const memory = new MemoryLog();
    let down = false;
    // An EventLog whose appends start failing mid-run, as a full disk or a lost broker would.
    const log: RunLog = Object.assign(Object.create(memory) as RunLog, {
      append: (topic: string, records: readonly LogRecord[]) =>
        down ? Promise.reject(new Error('disk full')) : memory.append(topic, records),
    });
    const dataDir = mkdtempSync(join(tmpdir(), 'loopguard-rt-'));
    dirs.push(dataDir);
    const guard = await createGuard({
      dataDir,
      log,
      schemaStore: new MemorySchemaStore(),
      secretKey: 'test-key',
    });
    guards.push(guard);
    const run = await guard.startRun({ runId: 'r-closed' });
    down = true;
    const tool = counter();
    const pay = { tool: 'pay', args: {}, sideEffect: true, operationKey: 'k' };
    await expect(run.call(pay, tool.fn())).rejects.toMatchObject({ code: 'log_unavailable' });
    await expect(run.call({ tool: 'read', args: {} }, tool.fn())).rejects.toMatchObject({
      code: 'log_unavailable',
    });
    expect(tool.n).toBe(0);
    down = false;
    expect(await run.call(pay, tool.fn())).toMatchObject({ status: 'executed' });
    expect(tool.n).toBe(1);
  });
});

describe('orphan claims', () => {
  it('withdraws a claim of its own run that the log never recorded, but waits for another run', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'loopguard-rt-'));
    dirs.push(dataDir);
    const guard = await createGuard({ dataDir });
    guards.push(guard);
    const ledger = SqliteLedger.open(dataDir);
    // What a claim looks like whose answer was lost before the run could record a decision.
    await ledger.claim('k-orphan', { runId: 'r-own', callId: 'lost' });
    await ledger.claim('k-other', { runId: 'r-elsewhere', callId: 'live' });
    const run = await guard.startRun({ runId: 'r-own' });
    const tool = counter();
    const mine = { tool: 'pay', args: { o: 1 }, sideEffect: true, operationKey: 'k-orphan' };
    expect(await run.call(mine, tool.fn('paid'))).toMatchObject({ status: 'executed' });
    const theirs = { tool: 'pay', args: { o: 2 }, sideEffect: true, operationKey: 'k-other' };
    expect(await run.call(theirs, tool.fn('paid'))).toMatchObject({
      status: 'waiting',
      rule: 'operation_in_flight',
    });
    expect(tool.n).toBe(1);
  });
});

describe('guardTools and toModelMessage', () => {
  it('wraps a tool map: a side effect runs once, a loop is stopped, messages tell the model why', async () => {
    const run = await (await guardWith()).startRun({ runId: 'r-wrap' });
    let charges = 0;
    const tools = guardTools(
      run,
      { charge: async () => ({ id: `p-${++charges}` }), search: async () => 'nothing' },
      { sideEffects: ['charge'], operationKey: (t, a) => (t === 'charge' ? `charge:${a.order}` : undefined) },
    );
    expect((await tools.charge({ order: 'A' })).status).toBe('executed');
    const again = await tools.charge({ order: 'A' });
    expect(again.status).toBe('cached');
    expect(toModelMessage(again)).toMatch(/\{"id":"p-1"\}[\s\S]*\[loopguard\] Already done/);
    expect(charges).toBe(1);
    let last = await tools.search({ q: 'x' });
    for (let i = 0; i < 5 && last.status !== 'stopped'; i++) last = await tools.search({ q: ' x' });
    expect(toModelMessage(last)).toMatch(/^\[loopguard\] stopped \(\w+\): /);
    expect(
      toModelMessage({
        status: 'refused',
        rule: 'r',
        message: 'm',
        evidence: { fingerprints: [], counts: {}, thresholds: {} },
      }),
    ).toBe('[loopguard] refused (r): m');
    expect(toModelMessage({ status: 'waiting', rule: 'backoff', message: 'later', waitUntilMs: 1 })).toBe(
      '[loopguard] wait (backoff): later',
    );
  });
});

describe('an operation key declares a side effect', () => {
  it('gates a keyed call by the ledger with no sideEffect option or policy (the README snippet)', async () => {
    const run = await (await guardWith()).startRun({ runId: 'key-only' });
    const charge = counter();
    const tools = guardTools(
      run,
      { charge_card: charge.fn({ receipt: 'r-1' }) },
      {
        operationKey: (tool, args) =>
          tool === 'charge_card' ? `acme:charge:${String(args.order)}` : undefined,
      },
    );
    expect(await tools.charge_card({ order: 'A1' })).toMatchObject({ status: 'executed' });
    expect(await tools.charge_card({ order: 'A1' })).toMatchObject({
      status: 'cached',
      value: { receipt: 'r-1' },
    });
    expect(charge.n).toBe(1);
  });

  it('refuses sideEffect: false beside an operation key, before anything is claimed or run', async () => {
    const run = await (await guardWith()).startRun({ runId: 'key-false' });
    const charge = counter();
    await expect(
      run.call({ tool: 'charge_card', args: {}, operationKey: 'k1', sideEffect: false }, charge.fn()),
    ).rejects.toMatchObject({ code: 'invalid_call', message: expect.stringContaining('req.sideEffect') });
    expect(charge.n).toBe(0);
  });
});
