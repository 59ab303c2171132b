/**
 * Side effects at the edges where one ran twice (reproduced on 083e578, each test fails there):
 * a reconcile answer that arrived after another run had settled the key and started the charge
 * freed that live claim; a PENDING answer (accepted, under way) gave the key back, so the poll the
 * guard asked for charged again; a side effect without an operation key that timed out or threw
 * was retried after the backoff, although it may have happened; a keyed side effect that timed
 * out but was still running in this process was charged again after a resume, when `reconcile`
 * asked the provider before the first charge landed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createGuard, type Guard, outcome, SqliteLedger } from '../src/index.js';

const dirs: string[] = [];
const guards: Guard[] = [];
afterEach(async () => {
  for (const g of guards.splice(0)) await g.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function guardOn(dataDir: string, policy: object = {}) {
  const g = await createGuard({ dataDir, policy });
  guards.push(g);
  return g;
}
function tempDir() {
  const d = mkdtempSync(join(tmpdir(), 'loopguard-side-'));
  dirs.push(d);
  return d;
}
/** A promise and the function that resolves it. */
function signal() {
  let fire: () => void = () => {};
  const fired = new Promise<void>((r) => {
    fire = r;
  });
  return { fire, fired };
}

const KEY = 'acme:charge:A1';
const CHARGE = {
  tool: 'charge_card',
  args: { order: 'A1', amount: 30 },
  operationKey: KEY,
  sideEffect: true,
};

describe('a side effect is run at most once', () => {
  it('ignores a reconcile answer about an attempt another run has settled and taken over since', async () => {
    const dir = tempDir();
    const [g0, g1, g2] = [await guardOn(dir), await guardOn(dir), await guardOn(dir)];
    const r0 = await g0.startRun({ runId: 'r0' });
    await r0.call(CHARGE, async () => {
      throw new Error('ECONNRESET');
    });
    expect(r0.state.status).toBe('NEEDS_HUMAN');

    let charges = 0;
    const firstStarted = signal();
    const firstMayEnd = signal();
    const [r1, r2] = [await g1.startRun({ runId: 'r1' }), await g2.startRun({ runId: 'r2' })];
    const p1 = r1.call(
      CHARGE,
      async () => {
        firstStarted.fire();
        await firstMayEnd.fired;
        return { receipt: `r1-${++charges}` };
      },
      { reconcile: async () => ({ happened: false }) },
    );
    // r2 asked the provider too, before r1's charge: "did not happen", an answer about r0's attempt.
    const p2 = r2.call(CHARGE, async () => ({ receipt: `r2-${++charges}` }), {
      reconcile: async () => {
        await firstStarted.fired;
        return { happened: false };
      },
    });
    const second = await p2;
    firstMayEnd.fire();
    expect((await p1).status).toBe('executed');
    expect(second.status).toBe('waiting');
    expect(charges).toBe(1);
    expect(await SqliteLedger.open(dir).get(KEY)).toMatchObject({ status: 'completed' });
  });

  it('keeps the key of a side effect that answered PENDING: a repeat gets that answer, never a second start', async () => {
    const dir = tempDir();
    const run = await (await guardOn(dir)).startRun({ runId: 'p' });
    let charges = 0;
    const charge = async () => outcome.pending({ payment: `p-${++charges}`, status: 'processing' });
    const first = await run.call(CHARGE, charge);
    expect(first).toMatchObject({ status: 'executed', decision: 'wait_bounded' });
    expect(first.status === 'executed' && first.message).toMatch(/ask for its status with a read/);
    expect(await SqliteLedger.open(dir).get(KEY)).toMatchObject({
      status: 'completed',
      resultJson: '{"payment":"p-1","status":"processing"}',
    });
    const other = await (await guardOn(dir)).startRun({ runId: 'q' });
    expect(await other.call(CHARGE, charge)).toMatchObject({
      status: 'cached',
      value: { payment: 'p-1', status: 'processing' },
    });
    expect(charges).toBe(1);
  });

  it('stops a side effect without an operation key that threw or timed out, in doubt, rather than retry it', async () => {
    const policy = { stepTimeoutMs: 50, tools: { charge_card: { sideEffect: true } } };
    const guard = await guardOn(tempDir(), policy);
    const req = { tool: 'charge_card', args: { order: 'A1', amount: 30 } };
    let charges = 0;
    const threw = await guard.startRun({ runId: 'threw' });
    const r = await threw.call(req, async () => {
      charges++;
      throw new Error('ECONNRESET');
    });
    expect(r).toMatchObject({ status: 'executed', decision: 'stop', rule: 'in_doubt' });
    expect(threw.state.status).toBe('NEEDS_HUMAN');
    expect(threw.state.report?.unmetPrecondition).toBe('outcome of charge_card call call-2-1');
    expect((await threw.call(req, async () => charges++)).status).toBe('stopped');

    const slow = await guard.startRun({ runId: 'slow' });
    const landed = signal();
    await slow.call(req, async () => {
      await new Promise((done) => setTimeout(done, 150));
      charges++;
      landed.fire();
    });
    expect(slow.state.status).toBe('NEEDS_HUMAN');
    await landed.fired;
    expect(charges).toBe(2);
  });

  it('holds the key of a timed-out side effect still running here: reconcile is asked once it has answered', async () => {
    const dir = tempDir();
    const guard = await guardOn(dir, { stepTimeoutMs: 50 });
    const booked: string[] = [];
    let started = 0;
    const lands = signal();
    let ended: () => void = () => {};
    const over = new Promise<void>((r) => {
      ended = r;
    });
    const charge = async () => {
      started++;
      await lands.fired; // a provider that ignores the abort: the request is already on the wire
      booked.push('A1');
      ended();
      return { receipt: 'r-1' };
    };
    const reconcile = async () =>
      booked.length > 0 ? { happened: true, result: { receipt: 'r-1' } } : { happened: false };
    const run = await guard.startRun({ runId: 'late' });
    expect(await run.call(CHARGE, charge, { reconcile })).toMatchObject({ rule: 'in_doubt' });
    expect(run.state.status).toBe('NEEDS_HUMAN');
    const resumed = await guard.resume('late', {
      preconditionChange: 'asked the provider',
      approvedBy: 'ops',
    });
    // The provider has nothing yet, and would say so: the call waits instead of charging again.
    expect(await resumed.call(CHARGE, charge, { reconcile })).toMatchObject({
      status: 'waiting',
      rule: 'operation_in_flight',
    });
    lands.fire();
    await over;
    await new Promise((r) => setImmediate(r)); // the tool's promise has settled, not just its body
    expect(await SqliteLedger.open(dir).get(KEY)).toMatchObject({ status: 'in_doubt' });
    expect(await resumed.call(CHARGE, charge, { reconcile })).toMatchObject({
      status: 'cached',
      value: { receipt: 'r-1' },
    });
    expect({ started, booked }).toEqual({ started: 1, booked: ['A1'] });
  });
});
