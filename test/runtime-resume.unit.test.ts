/**
 * Resume and reissue on the embedded log. Each resume happens in a NEW Guard over the same data
 * dir, as a new process would: the run is rebuilt from the log, not taken from memory.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createGuard, type Guard, outcome, SqliteLedger } from '../src/runtime/index.js';

const dirs: string[] = [];
const guards: Guard[] = [];
afterEach(async () => {
  for (const g of guards.splice(0)) await g.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const POLICY = { tools: { pay: { sideEffect: true } } };
async function open(dataDir: string) {
  const g = await createGuard({ policy: POLICY, dataDir });
  guards.push(g);
  return g;
}
function tempDir() {
  const d = mkdtempSync(join(tmpdir(), 'loopguard-resume-'));
  dirs.push(d);
  return d;
}

describe('guard.resume', () => {
  it('refuses a resume without a precondition change, with the reason', async () => {
    const dir = tempDir();
    const run = await (await open(dir)).startRun({ runId: 'r1' });
    await run.cancel('user went away');
    const fresh = await open(dir);
    await expect(fresh.resume('r1', { preconditionChange: '  ' })).rejects.toMatchObject({
      code: 'precondition_unchanged',
      message: expect.stringMatching(/needs a recorded precondition change/),
    });
    await expect(fresh.resume('nope', { preconditionChange: 'x' })).rejects.toMatchObject({
      code: 'unknown_run',
    });
  });

  it('rebuilds the run in a new guard, keeps the checkpoint progress version and repeats no completed operation', async () => {
    const dir = tempDir();
    let charges = 0;
    const pay = async () => ({ id: `p-${++charges}` });
    const first = await open(dir);
    const run = await first.startRun({ runId: 'r2' });
    await run.call({ tool: 'pay', args: { o: 1 }, operationKey: 'acme:pay:1' }, pay);
    await run.call({ tool: 'scan', args: {} }, () => outcome.success('page 7', { progressVersion: 7 }));
    const cp = await run.checkpoint();
    for (let i = 0; i < 5 && run.state.status === 'RUNNING'; i++)
      await run.call({ tool: 'scan', args: {} }, () => 'page 7');
    expect(run.state.status).toBe('STOPPED_LOOP_GUARD');
    await first.close();

    const second = await open(dir);
    const resumed = await second.resume('r2', {
      preconditionChange: 'index rebuilt',
      approvedBy: 'ops@acme',
    });
    expect(resumed).not.toBe(run);
    expect(resumed.state.status).toBe('RUNNING');
    expect(resumed.state.lastCheckpoint).toEqual({ id: cp, progressVersion: 7 });
    expect(resumed.state.progressVersion).toBe(7);
    const again = await resumed.call({ tool: 'pay', args: { o: 1 }, operationKey: 'acme:pay:1' }, pay);
    expect(again).toMatchObject({ status: 'cached', value: { id: 'p-1' } });
    // The same call with the same version is no news after the resume: version 7 was kept, not reset to 0.
    const same = await resumed.call({ tool: 'scan', args: {} }, () =>
      outcome.success('page 7', { progressVersion: 7 }),
    );
    expect(same.status).toBe('executed');
    expect(charges).toBe(1);
  });

  it('records the cut-off call of a crashed process as in doubt when it is resumed', async () => {
    const dir = tempDir();
    const first = await open(dir);
    const run = await first.startRun({ runId: 'r3' });
    let charges = 0;
    let release: (v: unknown) => void = () => undefined;
    let cutOff: Promise<unknown> = Promise.resolve();
    const started = new Promise<void>((resolve) => {
      cutOff = run.call({ tool: 'pay', args: { o: 3 }, operationKey: 'acme:pay:3' }, () => {
        charges++;
        resolve();
        return new Promise((r) => {
          release = r;
        });
      });
    });
    await started;
    // The first guard's log is closed under the hanging call, as a dying process leaves it; a
    // second guard over the same dir is the new process.
    await first.close();
    const second = await open(dir);
    const resumed = await second.resume('r3', { preconditionChange: 'process restarted' });
    const r = await resumed.call(
      { tool: 'pay', args: { o: 3 }, operationKey: 'acme:pay:3' },
      async () => charges++,
    );
    expect(r).toMatchObject({ status: 'stopped', rule: 'in_doubt' });
    expect(resumed.state.status).toBe('NEEDS_HUMAN');
    expect(resumed.state.report?.inDoubtOperations).toContain('acme:pay:3');
    expect(charges).toBe(1);
    // The dead process's tool answering late cannot write to its closed log, and says so.
    release('late');
    await expect(cutOff).rejects.toMatchObject({
      code: 'log_unavailable',
      message: expect.stringMatching(/the tool ran but its result was not recorded/),
    });
  });
});

describe('run.reissue', () => {
  it('lets an operator run an operation a second time under a new key, with the reason kept', async () => {
    const dir = tempDir();
    const guard = await open(dir);
    const run = await guard.startRun({ runId: 'r4' });
    let charges = 0;
    const pay = async () => ({ id: `p-${++charges}` });
    await run.call({ tool: 'pay', args: { o: 4 }, operationKey: 'acme:pay:4' }, pay);
    expect(
      (await run.call({ tool: 'pay', args: { o: 4, n: 2 }, operationKey: 'acme:pay:4' }, pay)).status,
    ).toBe('cached');
    await expect(run.reissue('acme:pay:4', 'acme:pay:4#2', { reason: '' })).rejects.toMatchObject({
      code: 'reissue_refused',
    });
    const note = await run.reissue('acme:pay:4', 'acme:pay:4#2', {
      reason: 'customer ordered twice',
      approvedBy: 'ops',
    });
    expect(
      await run.call({ tool: 'pay', args: { o: 4, n: 2 }, operationKey: 'acme:pay:4#2' }, pay),
    ).toMatchObject({
      status: 'executed',
      value: { id: 'p-2' },
    });
    expect(charges).toBe(2);
    const ledger = SqliteLedger.open(dir);
    expect(await ledger.reissuedFrom('acme:pay:4#2')).toEqual(note);
    expect(await ledger.get('acme:pay:4')).toMatchObject({ status: 'completed', resultJson: '{"id":"p-1"}' });
  });
});

describe('run.settle', () => {
  it('refuses to settle a side effect that is still running, so no other run can run it again', async () => {
    const guard = await open(tempDir());
    const [a, b] = [await guard.startRun({ runId: 'ra' }), await guard.startRun({ runId: 'rb' })];
    let charges = 0;
    let finish: () => void = () => {};
    const held = new Promise<void>((r) => {
      finish = r;
    });
    const req = { tool: 'pay', args: { o: 5 }, operationKey: 'acme:pay:5' };
    let started: () => void = () => {};
    const running = new Promise<void>((r) => {
      started = r;
    });
    const first = a.call(req, async () => {
      charges++;
      started();
      await held;
      return { id: 'p-1' };
    });
    await running;
    // Before the fix the ledger dropped the live claim here, and rb's call below charged again.
    await expect(b.settle('acme:pay:5', { happened: false, settledBy: 'ops' })).rejects.toMatchObject({
      code: 'settle_refused',
    });
    const second = await b.call(req, async () => ({ id: `p-${++charges}` }));
    expect(second.status).toBe('waiting');
    finish();
    expect((await first).status).toBe('executed');
    expect((await b.call(req, async () => ({ id: `p-${++charges}` }))).status).toBe('cached');
    expect(charges).toBe(1);
  });
});
