/**
 * The Run contract: what an agent loop may count on from any `Run`, the library's GuardedRun and
 * the remote run behind the service alike. Each adapter's test file calls `describeRunContract`
 * with a harness that starts runs under the default policy; the pass condition is always the
 * tool's own counter, not a status alone.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CallRequest, guardTools, type Run } from '../src/runtime/index.js';

export interface RunHarness {
  /** A new run of this adapter's guard (default policy), started. */
  startRun(runId: string): Promise<Run>;
  /** The guard's resume of a stopped run: an approved precondition change. */
  resume(runId: string, change: { preconditionChange: string; approvedBy?: string }): Promise<Run>;
  close(): Promise<void>;
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

export function describeRunContract(
  name: string,
  open: () => Promise<RunHarness>,
  opts: { readonly timeoutMs?: number; readonly hookTimeoutMs?: number } = {},
): void {
  describe(`Run contract: ${name}`, () => {
    let h: RunHarness;
    beforeAll(async () => {
      h = await open();
    }, opts.hookTimeoutMs);
    afterAll(async () => {
      await h?.close();
    }, opts.hookTimeoutMs);
    const runOf = (label: string) => h.startRun(`${label}-${randomUUID().slice(0, 8)}`);
    const test = (title: string, body: () => Promise<void>) => it(title, body, opts.timeoutMs);

    test('an allowed call runs its tool once and returns its result', async () => {
      const run = await runOf('allowed');
      const search = counter();
      const r = await run.call({ tool: 'search', args: { q: 'refund' } }, search.fn({ hits: 3 }));
      expect(r).toMatchObject({
        status: 'executed',
        value: { hits: 3 },
        kind: 'SUCCESS',
        decision: 'continue',
      });
      expect(search.n).toBe(1);
      expect(run.state.status).toBe('RUNNING');
      expect(run.state.seq).toBeGreaterThan(0);
    });

    test('the third identical call is refused (the run stops: exact_repeat) and its tool does not run', async () => {
      const run = await runOf('repeat');
      const search = counter();
      const req = { tool: 'search', args: { q: 'same' } };
      expect((await run.call(req, search.fn('nothing new'))).status).toBe('executed');
      expect((await run.call(req, search.fn('nothing new'))).status).toBe('executed');
      const third = await run.call(req, search.fn('nothing new'));
      expect(third).toMatchObject({ status: 'stopped', rule: 'exact_repeat' });
      expect(search.n).toBe(2);
      expect(run.state.status).toBe('STOPPED_LOOP_GUARD');
      expect(run.state.report).toMatchObject({
        terminalState: 'STOPPED_LOOP_GUARD',
        guardReason: 'exact_repeat',
      });
    });

    test('a side effect with an operation key is charged once: the retry gets the recorded result', async () => {
      const run = await runOf('charge');
      const charge = counter();
      const req: CallRequest = {
        tool: 'charge',
        args: { order: 'A1' },
        sideEffect: true,
        operationKey: `charge-${randomUUID()}`,
      };
      expect(await run.call(req, charge.fn({ receipt: 'r-1' }))).toMatchObject({
        status: 'executed',
        value: { receipt: 'r-1' },
      });
      expect(await run.call(req, charge.fn({ receipt: 'r-2' }))).toMatchObject({
        status: 'cached',
        value: { receipt: 'r-1' },
      });
      expect(charge.n).toBe(1);
    });

    test('an in-doubt side effect is settled by reconcile: happened, it is cached and never runs again', async () => {
      const req: CallRequest = {
        tool: 'charge',
        args: { order: 'B2' },
        sideEffect: true,
        operationKey: `charge-${randomUUID()}`,
      };
      const charge = counter();
      const first = await runOf('doubt');
      const lost = await first.call(req, async () => {
        charge.n++;
        throw new Error('connection reset');
      });
      expect(lost).toMatchObject({ status: 'executed', decision: 'stop' });
      expect(first.state.status).toBe('NEEDS_HUMAN');
      expect(first.state.report?.inDoubtOperations).toEqual([req.operationKey]);

      const asked: string[] = [];
      const second = await runOf('reconciled');
      const r = await second.call(req, charge.fn({ receipt: 'again' }), {
        reconcile: async (key) => {
          asked.push(key);
          return { happened: true, result: { receipt: 'r-provider' } };
        },
      });
      expect(r).toMatchObject({ status: 'cached', value: { receipt: 'r-provider' } });
      expect(asked).toEqual([req.operationKey]);
      expect(charge.n).toBe(1);
      expect(second.state.status).toBe('RUNNING');
      // Settled in the shared ledger: a third run, with no hook, gets the reconciled result too.
      const third = await runOf('after-reconcile');
      expect(await third.call(req, charge.fn('never'))).toMatchObject({
        status: 'cached',
        value: { receipt: 'r-provider' },
      });
      expect(charge.n).toBe(1);
    });

    test("the run's own in-doubt call, after an approved resume, is settled by reconcile and not run again", async () => {
      const req: CallRequest = {
        tool: 'charge',
        args: { order: 'G7' },
        sideEffect: true,
        operationKey: `charge-${randomUUID()}`,
      };
      const charge = counter();
      const run = await runOf('own-doubt');
      await run.call(req, async () => {
        charge.n++;
        throw new Error('connection reset');
      });
      expect(run.state.status).toBe('NEEDS_HUMAN');
      const resumed = await h.resume(run.runId, { preconditionChange: 'provider asked', approvedBy: 'ops' });
      expect(resumed.state.status).toBe('RUNNING');
      const r = await resumed.call(req, charge.fn('again'), {
        reconcile: async () => ({ happened: true, result: { receipt: 'r-own' } }),
      });
      expect(r).toMatchObject({ status: 'cached', value: { receipt: 'r-own' } });
      expect(charge.n).toBe(1);
      // The settlement is the run's own record now: asked again, no hook is needed.
      expect(await resumed.call(req, charge.fn('never'))).toMatchObject({
        status: 'cached',
        value: { receipt: 'r-own' },
      });
      expect(resumed.state.status).toBe('RUNNING');
    });

    test('an in-doubt side effect that reconcile says never happened runs once more', async () => {
      const req: CallRequest = {
        tool: 'charge',
        args: { order: 'C3' },
        sideEffect: true,
        operationKey: `charge-${randomUUID()}`,
      };
      const charge = counter();
      const first = await runOf('doubt-free');
      await first.call(req, () => Promise.reject(new Error('connection reset')));
      expect(first.state.status).toBe('NEEDS_HUMAN');
      const second = await runOf('rerun');
      const r = await second.call(req, charge.fn({ receipt: 'r-2' }), {
        reconcile: async () => ({ happened: false }),
      });
      expect(r).toMatchObject({ status: 'executed', value: { receipt: 'r-2' } });
      expect(charge.n).toBe(1);
    });

    test('without a reconcile hook, an in-doubt side effect stops the run for a person', async () => {
      const req: CallRequest = {
        tool: 'charge',
        args: { order: 'D4' },
        sideEffect: true,
        operationKey: `charge-${randomUUID()}`,
      };
      const first = await runOf('doubt-human');
      await first.call(req, () => Promise.reject(new Error('connection reset')));
      const charge = counter();
      const second = await runOf('no-hook');
      expect(await second.call(req, charge.fn())).toMatchObject({ status: 'stopped', rule: 'in_doubt' });
      expect(second.state.status).toBe('NEEDS_HUMAN');
      expect(charge.n).toBe(0);
    });

    test("a person's settle of an in-doubt side effect: its result is what the next run gets", async () => {
      const req: CallRequest = {
        tool: 'charge',
        args: { order: 'E5' },
        sideEffect: true,
        operationKey: `charge-${randomUUID()}`,
      };
      const first = await runOf('settled');
      await first.call(req, () => Promise.reject(new Error('connection reset')));
      expect(first.state.status).toBe('NEEDS_HUMAN');
      await first.settle(req.operationKey as string, {
        happened: true,
        result: { receipt: 'r-ops' },
        settledBy: 'ops',
      });
      const charge = counter();
      const second = await runOf('after-settle');
      expect(await second.call(req, charge.fn())).toMatchObject({
        status: 'cached',
        value: { receipt: 'r-ops' },
      });
      expect(charge.n).toBe(0);
    });

    test('a reissue lets a done side effect run once more, under the new key only', async () => {
      const run = await runOf('reissue');
      const key = `refund-${randomUUID()}`;
      const refund = counter();
      const req = (operationKey: string): CallRequest => ({
        tool: 'refund',
        args: { order: 'F6', operationKey },
        sideEffect: true,
        operationKey,
      });
      expect((await run.call(req(key), refund.fn('refunded'))).status).toBe('executed');
      const note = await run.reissue(key, `${key}#2`, {
        reason: 'refunded twice on purpose',
        approvedBy: 'ops',
      });
      expect(note).toMatchObject({
        oldKey: key,
        newKey: `${key}#2`,
        reason: 'refunded twice on purpose',
        approvedBy: 'ops',
        by: { runId: run.runId },
      });
      expect((await run.call(req(`${key}#2`), refund.fn('refunded again'))).status).toBe('executed');
      expect(refund.n).toBe(2);
      await expect(run.reissue(key, `${key}#2`, { reason: 'a third time' })).rejects.toMatchObject({
        code: 'reissue_refused',
      });
    });

    test('guardTools drives any Run: a side effect by its key charged once, reconcile passed on', async () => {
      const run = await runOf('tools');
      let charged = 0;
      const asked: string[] = [];
      const order = randomUUID();
      const tools = guardTools(
        run,
        { charge: async (args: { order: string }) => ({ receipt: `${args.order}-${++charged}` }) },
        {
          operationKey: (tool, args) => `${tool}:${String(args.order)}`,
          reconcile: async (key) => {
            asked.push(key);
            return { happened: false };
          },
        },
      );
      expect(await tools.charge({ order })).toMatchObject({
        status: 'executed',
        value: { receipt: `${order}-1` },
      });
      expect(await tools.charge({ order })).toMatchObject({
        status: 'cached',
        value: { receipt: `${order}-1` },
      });
      expect(charged).toBe(1);
      // Nothing was in doubt: the hook was never asked.
      expect(asked).toEqual([]);
    });

    test('finish and cancel end the run: COMPLETED, PARTIAL with its gaps, PARTIAL with the reason', async () => {
      const done = await (await runOf('verified')).finish({ verified: true });
      expect(done.status).toBe('COMPLETED');
      const partial = await (await runOf('gaps')).finish({ verified: false, gaps: ['no refund'] });
      expect(partial).toMatchObject({ status: 'PARTIAL', report: { gaps: ['no refund'] } });
      const run = await runOf('cancelled');
      const cancelled = await run.cancel('user cancelled');
      expect(cancelled.status).toBe('PARTIAL');
      expect(cancelled.report?.message).toMatch(/user cancelled/);
      expect(run.state).toMatchObject({ status: 'PARTIAL', seq: cancelled.seq });
    });

    test('a call after the run stopped is refused and its tool does not run', async () => {
      const tool = counter();
      const finished = await runOf('finished');
      await finished.finish({ verified: true });
      expect(await finished.call({ tool: 'search', args: { q: 'late' } }, tool.fn())).toMatchObject({
        status: 'stopped',
      });
      const cancelled = await runOf('cancelled-call');
      await cancelled.cancel('user cancelled');
      expect(await cancelled.call({ tool: 'search', args: { q: 'late' } }, tool.fn())).toMatchObject({
        status: 'stopped',
      });
      expect(tool.n).toBe(0);
    });

    test('model usage, checkpoints and a tool run inside the run are one Run API', async () => {
      const run = await runOf('api');
      await run.recordModelUsage({ tokensIn: 10, tokensOut: 5, costUsd: 0.001 });
      expect(await run.checkpoint('after-plan')).toBe('after-plan');
      // A tool that calls its own run would wait for itself: refused at once, on every Run.
      const inner = await run.call({ tool: 'outer', args: {} }, () =>
        run.call({ tool: 'inner', args: {} }, counter().fn()).then(
          () => 'inner ran',
          (e: { code?: string }) => e.code,
        ),
      );
      expect(inner).toMatchObject({ status: 'executed', value: 'reentrant_call' });
      expect((await run.finish({ verified: true })).report).toMatchObject({
        lastSafeCheckpoint: 'after-plan',
      });
    });
  });
}
