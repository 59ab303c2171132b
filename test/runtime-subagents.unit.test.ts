/**
 * Budgets for supervisors and sub-agents through the library API. The pass condition is the
 * tools' own counters: after a parent ends, no call of its sub-agents executes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RecordedEvent } from '../src/domain/index.js';
import { MemorySchemaStore } from '../src/events/memory-schema-store.js';
import type { PolicyInput } from '../src/index.js';
import { EmbeddedLog } from '../src/log/embedded/embedded-log.js';
import { SqliteSchemaStore } from '../src/log/embedded/sqlite-schema-store.js';
import { EventStore, MemoryLog } from '../src/log/index.js';
import { Projections } from '../src/projections/index.js';
import { createGuard, type Guard } from '../src/runtime/index.js';

const dirs: string[] = [];
const guards: Guard[] = [];
afterEach(async () => {
  for (const g of guards.splice(0)) await g.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function guardWith(policy: PolicyInput = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'loopguard-sub-'));
  dirs.push(dataDir);
  const log = new MemoryLog();
  const schemaStore = new MemorySchemaStore();
  const guard = await createGuard({ policy, dataDir, log, schemaStore, secretKey: 'test-key' });
  guards.push(guard);
  const rebuild = async () => {
    const events: RecordedEvent[] = [];
    for await (const e of (await EventStore.create(log, schemaStore)).readRuns(0)) events.push(e);
    return new Projections().applyAll(events);
  };
  return { guard, rebuild };
}

const tool = () => {
  const t = { n: 0, fn: async () => `answer ${++t.n}` };
  return t;
};

describe('startRun({ parentRunId })', () => {
  it("counts a child's steps against its parent's budget, and the parent's against its own", async () => {
    const { guard } = await guardWith({ maxSteps: 5 });
    const boss = await guard.startRun({ runId: 'boss' });
    const worker = await guard.startRun({ runId: 'worker', parentRunId: 'boss' });
    const t = tool();
    for (let i = 0; i < 3; i++) await boss.call({ tool: 'plan', args: { i } }, t.fn);
    const first = await worker.call({ tool: 'search', args: { q: 1 } }, t.fn);
    const second = await worker.call({ tool: 'search', args: { q: 2 } }, t.fn);
    expect([first.status, second.status]).toEqual(['executed', 'executed']);
    const third = await worker.call({ tool: 'search', args: { q: 3 } }, t.fn);
    expect(third).toMatchObject({ status: 'stopped', rule: 'step_budget' });
    expect(third.status === 'stopped' && third.message).toContain('ancestor run boss');
    expect(await boss.call({ tool: 'plan', args: { i: 9 } }, t.fn)).toMatchObject({
      status: 'stopped',
      rule: 'step_budget',
    });
    expect(t.n).toBe(5);
  });

  it("counts a grandchild's cost (estimated when not reported) against the root", async () => {
    // Only the root has a cost budget: the workers' own policy has none.
    const { guard } = await guardWith({
      maxCostUsd: 1,
      tools: { render: { costUsd: 0.3 } },
      taskTypes: { worker: { maxCostUsd: null } },
    });
    await guard.startRun({ runId: 'root' });
    await guard.startRun({ runId: 'mid', parentRunId: 'root', taskType: 'worker' });
    const leaf = await guard.startRun({ runId: 'leaf', parentRunId: 'mid', taskType: 'worker' });
    const t = tool();
    const statuses: string[] = [];
    for (let i = 0; i < 6; i++)
      statuses.push((await leaf.call({ tool: 'render', args: { i } }, t.fn)).status);
    expect(statuses).toEqual(['executed', 'executed', 'executed', 'refused', 'refused', 'refused']);
    const refused = await leaf.call({ tool: 'render', args: { i: 9 } }, t.fn);
    expect(refused).toMatchObject({ status: 'refused', rule: 'cost_estimate' });
    expect(refused.status === 'refused' && refused.message).toContain('ancestor run root');
    expect(t.n).toBe(3);
    expect(guard.run('root')?.state.costUsd).toBe(0);
    expect(leaf.state.costUsd).toBeCloseTo(0.9);
  });

  it('a cancelled parent stops its children and grandchildren: none of their calls runs after', async () => {
    const { guard } = await guardWith();
    const boss = await guard.startRun({ runId: 'boss' });
    const a = await guard.startRun({ runId: 'a', parentRunId: 'boss' });
    const b = await guard.startRun({ runId: 'b', parentRunId: 'boss' });
    const a1 = await guard.startRun({ runId: 'a1', parentRunId: 'a' });
    const t = tool();
    await a.call({ tool: 'search', args: {} }, t.fn);
    await b.finish({ verified: true });
    await boss.cancel('user cancelled');
    expect(boss.state.report?.children).toEqual([
      { runId: 'a', state: 'RUNNING' },
      { runId: 'b', state: 'COMPLETED' },
    ]);
    expect([a.state.status, b.state.status, a1.state.status]).toEqual(['PARTIAL', 'COMPLETED', 'PARTIAL']);
    expect(a.state.report).toMatchObject({ guardReason: 'parent_stopped' });
    expect(a.state.report?.children).toEqual([{ runId: 'a1', state: 'RUNNING' }]);
    const before = t.n;
    expect((await a.call({ tool: 'search', args: { q: 2 } }, t.fn)).status).toBe('stopped');
    expect((await a1.call({ tool: 'search', args: { q: 3 } }, t.fn)).status).toBe('stopped');
    expect(t.n).toBe(before);
  });

  it('a parent stopped by a loop rule stops its children too', async () => {
    const { guard } = await guardWith();
    const boss = await guard.startRun({ runId: 'boss' });
    const w = await guard.startRun({ runId: 'w', parentRunId: 'boss' });
    const t = tool();
    const same = async () => 'same';
    for (let i = 0; i < 3; i++) await boss.call({ tool: 'check', args: {} }, same);
    expect(boss.state.status).toBe('STOPPED_LOOP_GUARD');
    expect(boss.state.report?.children).toEqual([{ runId: 'w', state: 'RUNNING' }]);
    expect(w.state.status).toBe('PARTIAL');
    expect((await w.call({ tool: 'search', args: {} }, t.fn)).status).toBe('stopped');
    expect(t.n).toBe(0);
  });

  it('refuses an unknown or ended parent, naming the field', async () => {
    const { guard } = await guardWith();
    await expect(guard.startRun({ runId: 'x', parentRunId: 'nobody' })).rejects.toMatchObject({
      code: 'unknown_parent',
      message: expect.stringContaining('parentRunId'),
    });
    const done = await guard.startRun({ runId: 'done' });
    await done.finish({ verified: true });
    await expect(guard.startRun({ runId: 'y', parentRunId: 'done' })).rejects.toMatchObject({
      code: 'parent_ended',
    });
  });

  it('a rebuild from the log gives the same tree, with the states the live runs ended in', async () => {
    const { guard, rebuild } = await guardWith();
    const boss = await guard.startRun({ runId: 'boss' });
    await guard.startRun({ runId: 'a', parentRunId: 'boss' });
    await guard.startRun({ runId: 'a1', parentRunId: 'a' });
    await guard.startRun({ runId: 'b', parentRunId: 'boss' });
    await boss.cancel('done with it');
    const p = await rebuild();
    expect(p.tree.of('a1')).toEqual({
      runId: 'boss',
      state: 'PARTIAL',
      children: [
        { runId: 'a', state: 'PARTIAL', children: [{ runId: 'a1', state: 'PARTIAL', children: [] }] },
        { runId: 'b', state: 'PARTIAL', children: [] },
      ],
    });
    expect(p.runs.get('a1')?.parentRunId).toBe('a');
    expect(p.stops.newestFirst().find((e) => e.runId === 'boss')).toBeDefined();
  });
});

/**
 * A run resumed in a new process (a new guard over the same data dir) without its relatives: the
 * guard reads them from the log, so the family rules hold as they did in the process that died.
 */
describe('resume of a run of a family in a new process', () => {
  const change = { preconditionChange: 'process restarted', approvedBy: 'ops' };

  /** Opens a guard over one data dir each time it is called: a process of its own, one after another. */
  function dataDir(policy: PolicyInput = {}) {
    const dir = mkdtempSync(join(tmpdir(), 'loopguard-sub-resume-'));
    dirs.push(dir);
    const open = async () => {
      const guard = await createGuard({ policy, dataDir: dir, secretKey: 'test-key' });
      guards.push(guard);
      return guard;
    };
    return { dir, open };
  }

  it("a sub-agent resumed alone counts against its ancestor's budget, with every other sub-agent's spend", async () => {
    const { open } = dataDir({ maxToolCalls: 3 });
    const first = await open();
    const t = tool();
    const boss = await first.startRun({ runId: 'boss' });
    const worker = await first.startRun({ runId: 'worker', parentRunId: 'boss' });
    const helper = await first.startRun({ runId: 'helper', parentRunId: 'boss' });
    await boss.call({ tool: 'plan', args: {} }, t.fn);
    await worker.call({ tool: 'search', args: { q: 1 } }, t.fn);
    await helper.call({ tool: 'search', args: { q: 2 } }, t.fn);
    await first.close();
    const resumed = await (await open()).resume('worker', change);
    const r = await resumed.call({ tool: 'search', args: { q: 3 } }, t.fn);
    expect(r).toMatchObject({ status: 'stopped', rule: 'tool_call_budget' });
    expect(r.status === 'stopped' && r.message).toContain('ancestor run boss');
    expect(t.n).toBe(3);
  });

  it('a sub-agent ended with its parent is not resumed, in the same process or a new one', async () => {
    const { open } = dataDir();
    const first = await open();
    const boss = await first.startRun({ runId: 'boss' });
    const worker = await first.startRun({ runId: 'worker', parentRunId: 'boss' });
    await boss.cancel('user cancelled the whole task');
    expect(worker.state.report).toMatchObject({ guardReason: 'parent_stopped' });
    await expect(first.resume('worker', change)).rejects.toMatchObject({ code: 'parent_ended' });
    expect(worker.state.status).toBe('PARTIAL');
    await first.close();
    const second = await open();
    await expect(second.resume('worker', change)).rejects.toMatchObject({ code: 'parent_ended' });
    expect(second.run('worker')).toBeUndefined();
  });

  it("a parent resumed alone counts its sub-agents' spend, and its end ends them in the log", async () => {
    const { dir, open } = dataDir({ maxToolCalls: 3 });
    const first = await open();
    const t = tool();
    const boss = await first.startRun({ runId: 'boss' });
    const worker = await first.startRun({ runId: 'worker', parentRunId: 'boss' });
    await boss.call({ tool: 'plan', args: {} }, t.fn);
    await worker.call({ tool: 'search', args: { q: 1 } }, t.fn);
    await worker.call({ tool: 'search', args: { q: 2 } }, t.fn);
    await first.close();
    const second = await open();
    const resumed = await second.resume('boss', change);
    // 1 of the boss's own and 2 of the worker's: the budget of 3 is spent.
    expect(await resumed.call({ tool: 'plan', args: { again: true } }, t.fn)).toMatchObject({
      status: 'stopped',
      rule: 'tool_call_budget',
    });
    expect(t.n).toBe(3);
    expect(resumed.state.report?.children).toEqual([{ runId: 'worker', state: 'RUNNING' }]);
    // The worker is in the family, not a run of this guard: nothing of it goes through it.
    expect(second.run('worker')).toBeUndefined();
    await second.close();
    const third = await open();
    await expect(third.resume('worker', change)).rejects.toMatchObject({ code: 'parent_ended' });
    const log = await EmbeddedLog.open(dir);
    try {
      const events = await EventStore.create(log, new SqliteSchemaStore(dir));
      const last = (await log.runStream(events).readStream('worker')).at(-1)?.event;
      expect(last?.type === 'RunStopped' && last.report).toMatchObject({
        terminalState: 'PARTIAL',
        guardReason: 'parent_stopped',
      });
    } finally {
      await log.close();
    }
  });
});
