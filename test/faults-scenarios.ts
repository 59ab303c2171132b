/**
 * Fault-injection scenarios shared by the embedded (unit) and Kafka (int) runs. Each has a
 * counting fake tool; its counter, kept in a file because workers are separate processes, is the
 * pass condition.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/machines/manual-clock.js';
import { outcome } from '../src/runtime/index.js';
import { type Backend, forWorker, type Opened, openGuard } from './support/faults/backends.js';
import { count, hit } from './support/faults/counter.js';
import { spawnWorker, type Worker } from './support/faults/spawn-worker.js';

const POLICY = { stepTimeoutMs: 2_000, maxPolls: 5, tools: { pay: { sideEffect: true } } };
const PAY = { tool: 'pay', args: { order: 'A1', amount: 30 }, sideEffect: true, operationKey: 'acme:pay:A1' };

export function faultScenarios(
  name: string,
  backendFor: (dataDir: string) => Backend,
  timeout: number,
): void {
  describe(`fault injection: ${name}`, () => {
    const cleanup: (() => Promise<void> | void)[] = [];
    afterEach(async () => {
      for (const c of cleanup.splice(0).reverse()) await c();
    });
    const dir = () => {
      const d = mkdtempSync(join(tmpdir(), 'loopguard-faults-'));
      cleanup.push(() => rmSync(d, { recursive: true, force: true }));
      return d;
    };
    const open = async (backend: Backend, clock?: ManualClock): Promise<Opened> => {
      const o = await openGuard(backend, POLICY, clock);
      cleanup.push(o.close);
      return o;
    };
    const worker = (job: object): Worker => {
      const w = spawnWorker(job);
      cleanup.push(() => {
        w.child.kill('SIGKILL');
      });
      return w;
    };

    it('argument jitter: same fingerprint, the repeat is stopped, the counters stay bounded', {
      timeout,
    }, async () => {
      const root = dir();
      const { guard } = await open(backendFor(root));
      const run = await guard.startRun({ runId: 'jitter' });
      const searches = join(root, 'search.count');
      const jittered = [
        { q: 'refund policy', page: 1, timestamp: 1, request_id: 'a' },
        { page: 1, q: '  refund policy ', timestamp: 2, request_id: 'b' },
        { q: 'refund policy\n', request_id: 'c', page: 1, timestamp: 3 },
        { page: 1, timestamp: 4, q: 'refund policy' },
      ];
      const statuses = [];
      for (const args of jittered)
        statuses.push(
          (
            await run.call({ tool: 'search', args }, () => {
              hit(searches);
              return 'no match';
            })
          ).status,
        );
      expect(statuses.slice(0, 2)).toEqual(['executed', 'executed']);
      expect(statuses[2]).toMatch(/refused|stopped/);
      expect(count(searches)).toBe(2);
      const pays = join(root, 'pay.count');
      const second = await guard.startRun({ runId: 'jitter-pay' });
      for (const amount of [30, ' 30', 30.0]) {
        await second.call({ ...PAY, args: { amount, order: ' A1 ', nonce: Math.random() } }, () => {
          hit(pays);
          return 'paid';
        });
      }
      expect(count(pays)).toBe(1);
    });

    it('PENDING polling: a job that moves is never blocked, one that does not is bounded', {
      timeout,
    }, async () => {
      const root = dir();
      const clock = new ManualClock(1_000);
      const { guard } = await open(backendFor(root), clock);
      const moving = join(root, 'moving.count');
      const run = await guard.startRun({ runId: 'poll-moving' });
      let last = null;
      for (let i = 1; i <= 12; i++) {
        last = await run.call({ tool: 'job_status', args: { job: 'j1' } }, () => {
          hit(moving);
          return i < 12 ? outcome.pending({ done: i * 8 }) : outcome.success({ done: 100 });
        });
        expect(last.status).toBe('executed');
        if (last.status === 'executed' && last.waitUntilMs !== null) clock.set(last.waitUntilMs);
      }
      expect(count(moving)).toBe(12);
      const stuck = join(root, 'stuck.count');
      const run2 = await guard.startRun({ runId: 'poll-stuck' });
      for (let i = 0; i < 30 && run2.state.status !== 'STOPPED_LOOP_GUARD'; i++) {
        const r = await run2.call({ tool: 'job_status', args: { job: 'j2' } }, () => {
          hit(stuck);
          return outcome.pending({ done: 0 });
        });
        if (r.status === 'executed' && r.waitUntilMs !== null) clock.set(r.waitUntilMs);
      }
      expect(run2.state.status).toBe('STOPPED_LOOP_GUARD');
      expect(count(stuck)).toBeLessThanOrEqual(POLICY.maxPolls + 2);
    });

    it('one operation key from 4 processes at once: executed exactly once', { timeout }, async () => {
      const root = dir();
      const backend = backendFor(root);
      const counter = join(root, 'pay.count');
      const workers = [0, 1, 2, 3].map((i) =>
        worker({
          mode: 'claim',
          backend: forWorker(backend, dir()),
          runId: `w${i}`,
          operationKey: PAY.operationKey,
          counter,
          policy: POLICY,
        }),
      );
      await dumpOnStall(workers, timeout / 3, Promise.all(workers.map((w) => w.line('ready'))));
      for (const w of workers) w.child.stdin?.write('go\n');
      const results = await dumpOnStall(
        workers,
        timeout / 3,
        Promise.all(workers.map((w) => w.line('result '))),
      );
      const statuses = results.map((r) => (JSON.parse(r) as { status: string }).status);
      expect(count(counter)).toBe(1);
      expect(statuses.filter((s) => s === 'executed')).toHaveLength(1);
      for (const s of statuses) expect(['executed', 'cached', 'waiting']).toContain(s);
      expect(await dumpOnStall(workers, timeout / 3, Promise.all(workers.map((w) => w.exited)))).toEqual([
        0, 0, 0, 0,
      ]);
    });

    it('SIGKILL after the side effect: in doubt, NEEDS_HUMAN, settled by reconcile, counter 1', {
      timeout,
    }, async () => {
      const root = dir();
      const backend = backendFor(root);
      const counter = join(root, 'pay.count');
      const w = worker({
        mode: 'crash',
        backend,
        runId: 'crashed',
        operationKey: PAY.operationKey,
        counter,
        policy: POLICY,
      });
      await w.line('side-effect-done');
      w.child.kill('SIGKILL');
      await w.exited;
      const { guard } = await open(backend);
      const run = await guard.resume('crashed', {
        preconditionChange: 'worker restarted',
        approvedBy: 'ops',
      });
      const pay = () => {
        hit(counter);
        return 'paid again';
      };
      const blind = await run.call(PAY, pay);
      expect(blind).toMatchObject({ status: 'stopped', rule: 'in_doubt' });
      expect(run.state.status).toBe('NEEDS_HUMAN');
      expect(run.state.report?.inDoubtOperations).toContain(PAY.operationKey);
      await guard.resume('crashed', { preconditionChange: 'provider console checked', approvedBy: 'ops' });
      const reconcile = async () => ({ happened: count(counter) > 0, result: { paymentId: 'p-crashed' } });
      expect(await run.call(PAY, pay, { reconcile })).toMatchObject({
        status: 'cached',
        value: { paymentId: 'p-crashed' },
      });
      expect(count(counter)).toBe(1);
    });

    it('a success lost on the way back: the retry is cached or in doubt, never run again', {
      timeout,
    }, async () => {
      const root = dir();
      const counter = join(root, 'pay.count');
      const { guard } = await open(backendFor(root));
      const run = await guard.startRun({ runId: 'lost-reply' });
      const lost = await run.call(PAY, () => {
        hit(counter);
        throw new Error('socket hang up');
      });
      expect(lost).toMatchObject({ status: 'executed', decision: 'stop' });
      const other = await guard.startRun({ runId: 'lost-reply-retry' });
      expect(
        await other.call(PAY, () => {
          hit(counter);
          return 'paid';
        }),
      ).toMatchObject({
        status: 'stopped',
        rule: 'in_doubt',
      });
      const third = await guard.startRun({ runId: 'lost-reply-reconciled' });
      const reconcile = async () => ({ happened: count(counter) > 0, result: 'paid' });
      expect(
        await third.call(
          PAY,
          () => {
            hit(counter);
            return 'paid';
          },
          { reconcile },
        ),
      ).toMatchObject({
        status: 'cached',
      });
      expect(count(counter)).toBe(1);
    });

    it('a run resumed after a stop repeats no completed operation', { timeout }, async () => {
      const root = dir();
      const backend = backendFor(root);
      const counter = join(root, 'pay.count');
      const first = await openGuard(backend, POLICY);
      const run = await first.guard.startRun({ runId: 'stop-resume' });
      await run.call(PAY, () => {
        hit(counter);
        return { paymentId: 'p-1' };
      });
      for (let i = 0; i < 5 && run.state.status === 'RUNNING'; i++)
        await run.call({ tool: 'ls', args: {} }, () => 'same');
      expect(run.state.status).toBe('STOPPED_LOOP_GUARD');
      await first.close();
      const { guard } = await open(backend);
      const resumed = await guard.resume('stop-resume', {
        preconditionChange: 'plan changed',
        approvedBy: 'ops',
      });
      expect(
        await resumed.call(PAY, () => {
          hit(counter);
          return { paymentId: 'p-2' };
        }),
      ).toMatchObject({
        status: 'cached',
        value: { paymentId: 'p-1' },
      });
      expect(count(counter)).toBe(1);
    });
  });
}

/** `work`, or after `ms` a failure carrying every worker's output: a stalled worker says where it is. */
async function dumpOnStall<T>(workers: readonly Worker[], ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const stalled = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const dump = workers.map(
        (w, i) => `worker ${i} (exit ${w.child.exitCode}): ${w.output()}\n${w.stderr().slice(-3000)}`,
      );
      reject(new Error(`workers stalled after ${ms} ms:\n${dump.join('\n---\n')}`));
    }, ms);
  });
  return Promise.race([work, stalled]).finally(() => clearTimeout(timer));
}
