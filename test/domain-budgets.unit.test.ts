import { describe, expect, it } from 'vitest';
import { call, given, policy, result, start, step, usage } from './support/given.js';

/** n distinct executed calls (no loop rule can fire on them). */
const distinct = (n: number, tool = 'read', from = 0) =>
  Array.from({ length: n }, (_, i) => step(`d${from + i}`, tool, { f: from + i }, `h${from + i}`));

describe('budgets before a call', () => {
  it('maxSteps: the call after the last allowed step is stopped with step_budget', () => {
    const s = given(start({ maxSteps: 3 }), ...distinct(3));
    const o = s.when(call('x', 'read', { f: 'next' }));
    expect(o.before).toMatchObject({ decision: 'stop_partial', rule: 'step_budget' });
    expect(o.before.evidence.thresholds).toEqual({ limit: 3 });
    expect(o.before.evidence.counts).toMatchObject({ steps: 3, used: 3 });
    expect(o.report).toMatchObject({ terminalState: 'STOPPED_LOOP_GUARD', guardReason: 'step_budget' });
    expect(o.state.steps).toBe(3);
  });

  it('single_query task type (resolved policy): the 4th step is stopped', () => {
    const q = given(
      { type: 'StartRun', runId: 'run-1', taskType: 'single_query', policy: policy({}, 'single_query') },
      ...distinct(3),
    );
    expect(q.state.taskType).toBe('single_query');
    expect(q.state.policy?.maxSteps).toBe(3);
    expect(q.when(call('x', 'read', { f: 'x' })).before.rule).toBe('step_budget');
  });

  it('maxToolCalls counts requests, refused ones included', () => {
    const s = given(
      start({ maxToolCalls: 3, tools: { pay: { maxCalls: 0 } } }),
      step('c1', 'read', { f: 1 }, 'h'),
      call('c2', 'pay', {}),
      call('c3', 'pay', {}),
    );
    expect(s.state.toolCalls).toBe(3);
    expect(s.state.steps).toBe(1);
    const o = s.when(call('c4', 'read', { f: 2 }));
    expect(o.before).toMatchObject({ decision: 'stop_partial', rule: 'tool_call_budget' });
  });

  it('maxTokens: tokens from tool results and from model usage both count', () => {
    const s = given(start({ maxTokens: 1000 }), step('c1', 'read', { f: 1 }, 'h', { tokens: 600 }));
    expect(s.when(call('c2', 'read', { f: 2 })).before.decision).toBe('execute');
    s.given(result('c2', 'h2', { tokens: 100 }), usage(200, 100, 0));
    expect(s.state.tokens).toBe(1000);
    const o = s.when(call('c3', 'read', { f: 3 }));
    expect(o.before).toMatchObject({ decision: 'stop_partial', rule: 'token_budget' });
    expect(o.report?.spend.tokens).toBe(1000);
  });

  it('maxTokens: model usage alone spends the budget', () => {
    const s = given(start({ maxTokens: 500 }), usage(300, 250, 0));
    expect(s.when(call('c1', 'read', {})).before.rule).toBe('token_budget');
  });

  it('maxCostUsd: no call runs once the spent cost reaches the limit', () => {
    const s = given(
      start({ maxCostUsd: 1 }),
      step('c1', 'llm', { p: 1 }, 'h', { costUsd: 0.6 }),
      usage(0, 0, 0.4),
    );
    const o = s.when(call('c2', 'read', {}));
    expect(o.before).toMatchObject({ decision: 'stop_partial', rule: 'cost_budget' });
    expect(o.before.evidence.thresholds).toEqual({ limit: 1, used: 1 });
  });

  it('maxWallClockMs: measured with the injected clock from the start of the run', () => {
    const s = given(
      start({ maxWallClockMs: 10_000 }, { atMs: 5_000 }),
      step('c1', 'read', {}, 'h', { atMs: 6_000 }, { atMs: 5_500 }),
    );
    expect(s.when(call('c2', 'read', { f: 2 }, { atMs: 14_999 })).before.decision).toBe('execute');
    s.given(result('c2', 'h2', { atMs: 14_999 }));
    const o = s.when(call('c3', 'read', { f: 3 }, { atMs: 15_000 }));
    expect(o.before).toMatchObject({ decision: 'stop_partial', rule: 'wall_clock_budget' });
    expect(o.report?.spend.elapsedMs).toBe(10_000);
  });

  it('per-tool maxCalls: refuses further calls of that tool only (tool_budget)', () => {
    const s = given(
      start({ tools: { pay: { maxCalls: 2 } } }),
      step('c1', 'pay', { a: 1 }, 'h1'),
      step('c2', 'pay', { a: 2 }, 'h2'),
    );
    const o = s.when(call('c3', 'pay', { a: 3 }));
    expect(o.before).toMatchObject({ decision: 'refuse', rule: 'tool_budget' });
    expect(o.before.evidence).toMatchObject({ counts: { calls: 2 }, thresholds: { maxCalls: 2 } });
    expect(o.state.status).toBe('RUNNING');
    expect(s.when(call('c4', 'read', {})).before.decision).toBe('execute');
  });

  it('maxConsecutiveSameTool: stops the next call of a tool called that many times in a row', () => {
    const s = given(start({ maxConsecutiveSameTool: 3 }), ...distinct(3, 'grep'));
    const o = s.when(call('x', 'grep', { f: 'other' }));
    expect(o.before).toMatchObject({ decision: 'stop_partial', rule: 'consecutive_same_tool' });
    expect(o.before.evidence).toMatchObject({ counts: { consecutive: 3 }, thresholds: { limit: 3 } });
  });

  it('maxConsecutiveSameTool: another tool in between resets the streak', () => {
    const s = given(
      start({ maxConsecutiveSameTool: 2 }),
      ...distinct(2, 'grep'),
      step('o', 'read', {}, 'h'),
      ...distinct(1, 'grep', 10),
    );
    expect(s.when(call('x', 'grep', { f: 'y' })).before.decision).toBe('execute');
  });
});

describe('pre-call cost estimate', () => {
  it('refuses a call whose estimate from the command exceeds what is left (cost_estimate)', () => {
    const s = given(start({ maxCostUsd: 1 }), step('c1', 'llm', { p: 1 }, 'h', { costUsd: 0.7 }));
    const o = s.when(call('c2', 'llm', { p: 2 }, { costEstimateUsd: 0.5 }));
    expect(o.before).toMatchObject({ decision: 'refuse', rule: 'cost_estimate' });
    expect(o.before.evidence.thresholds).toMatchObject({ estimateUsd: 0.5, maxCostUsd: 1 });
    expect(o.before.evidence.thresholds.leftUsd).toBeCloseTo(0.3);
    expect(o.state.steps).toBe(1);
    expect(o.state.status).toBe('RUNNING');
    expect(s.when(call('c3', 'llm', { p: 3 }, { costEstimateUsd: 0.3 })).before.decision).toBe('execute');
  });

  it('uses tools.<name>.costUsd when the command gives no estimate', () => {
    const s = given(
      start({ maxCostUsd: 1, tools: { render: { costUsd: 0.4 } } }),
      step('c1', 'x', {}, 'h', { costUsd: 0.7 }),
    );
    expect(s.when(call('c2', 'render', {})).before).toMatchObject({
      decision: 'refuse',
      rule: 'cost_estimate',
    });
  });
});

describe('BudgetWarning', () => {
  it('warns once when the steps budget passes warnAt', () => {
    const s = given(start({ maxSteps: 10, warnAt: 0.8 }), ...distinct(7));
    expect(s.history.filter((r) => r.event.type === 'BudgetWarning')).toHaveLength(0);
    s.given(call('w8', 'read', { f: 'w8' }));
    const o = s.when(result('w8', 'w8'));
    expect(o.of('BudgetWarning')).toEqual([
      expect.objectContaining({ type: 'BudgetWarning', budget: 'steps', used: 8, limit: 10 }),
    ]);
    s.given(step('w9', 'read', { f: 'w9' }, 'w9'), step('w10', 'read', { f: 'w10' }, 'w10'));
    expect(s.history.filter((r) => r.event.type === 'BudgetWarning')).toHaveLength(1);
  });

  it('warns on tokens from model usage', () => {
    const s = given(start({ maxTokens: 100 }));
    const o = s.when(usage(50, 35, 0));
    expect(o.of('BudgetWarning')).toEqual([
      expect.objectContaining({ budget: 'tokens', used: 85, limit: 100 }),
    ]);
    expect(s.when(usage(1, 1, 0)).of('BudgetWarning')).toEqual([]);
  });

  it('warns on cost and respects a custom warnAt', () => {
    const s = given(start({ maxCostUsd: 10, warnAt: 0.5 }), step('c1', 'x', {}, 'h', { costUsd: 4 }));
    expect(s.history.some((r) => r.event.type === 'BudgetWarning')).toBe(false);
    s.given(call('c2', 'x', { a: 2 }));
    expect(s.when(result('c2', 'h2', { costUsd: 1 })).of('BudgetWarning')).toEqual([
      expect.objectContaining({ budget: 'cost_usd', used: 5, limit: 10 }),
    ]);
  });
});
