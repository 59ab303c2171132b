import { describe, expect, it } from 'vitest';
import type { AncestorView, FamilyView } from '../src/domain/index.js';
import { NO_SPEND } from '../src/domain/index.js';
import { type Cmd, call, given, start, step } from './support/given.js';

/** Given/when/then for supervisors and sub-agents: the tree arrives with the command, as the ledger's view does. */

const parent = (over: Partial<AncestorView> = {}): AncestorView => ({
  runId: 'boss',
  status: 'RUNNING',
  limits: { maxSteps: 10, maxToolCalls: null, maxTokens: null, maxCostUsd: 1 },
  spent: { steps: 4, toolCalls: 4, tokens: 0, costUsd: 0.2 },
  ...over,
});
const family = (over: Partial<FamilyView> = {}): FamilyView => ({
  below: NO_SPEND,
  ancestors: [],
  children: [],
  ...over,
});
const endWithParent = (
  parentState: 'PARTIAL' | 'STOPPED_LOOP_GUARD',
  children = [] as FamilyView['children'],
): Cmd => ({
  type: 'EndWithParent',
  parentRunId: 'boss',
  parentState,
  children,
});

describe('a sub-agent run', () => {
  it('given a parent, when the run starts, then the link is in the event and the state', () => {
    const o = given().when(start({}, { parentRunId: 'boss' }));
    expect(o.of('RunStarted')[0]?.parentRunId).toBe('boss');
    expect(o.state.parentRunId).toBe('boss');
  });

  it("given the parent's subtree used up the parent's steps, when the child calls, then it is stopped by the step budget", () => {
    const s = given(start({}, { parentRunId: 'boss' }));
    const spent = { steps: 10, toolCalls: 10, tokens: 0, costUsd: 0.2 };
    const o = s.when(
      call('c1', 'search', { q: 'x' }, { family: family({ ancestors: [parent({ spent })] }) }),
    );
    expect(o.before).toMatchObject({ decision: 'stop_partial', rule: 'step_budget' });
    expect(o.before.message).toContain('ancestor run boss');
    expect(o.report).toMatchObject({ terminalState: 'STOPPED_LOOP_GUARD', guardReason: 'step_budget' });
  });

  it("given a grandparent's cost budget is spent, then the grandchild is stopped, whatever its own budgets", () => {
    const root = parent({ runId: 'root', spent: { steps: 1, toolCalls: 1, tokens: 0, costUsd: 1 } });
    const o = given(start({}, { parentRunId: 'boss' })).when(
      call('c1', 'search', {}, { family: family({ ancestors: [parent(), root] }) }),
    );
    expect(o.before).toMatchObject({ decision: 'stop_partial', rule: 'cost_budget' });
    expect(o.before.message).toContain('ancestor run root');
  });

  it('given an ancestor with $0.10 left, when the call is estimated at $0.30, then it is refused', () => {
    const spent = { steps: 1, toolCalls: 1, tokens: 0, costUsd: 0.9 };
    const o = given(start({}, { parentRunId: 'boss' })).when(
      call('c1', 'render', {}, { costEstimateUsd: 0.3, family: family({ ancestors: [parent({ spent })] }) }),
    );
    expect(o.before).toMatchObject({ decision: 'refuse', rule: 'cost_estimate' });
  });

  it('given an ended parent, when the child calls, then nothing runs and the child ends PARTIAL (parent_stopped)', () => {
    const o = given(start({}, { parentRunId: 'boss' })).when(
      call('c1', 'search', {}, { family: family({ ancestors: [parent({ status: 'PARTIAL' })] }) }),
    );
    expect(o.before).toMatchObject({ decision: 'stop_partial', rule: 'parent_stopped' });
    expect(o.report).toMatchObject({ terminalState: 'PARTIAL', guardReason: 'parent_stopped' });
  });

  it('given a live parent within budget, then the call runs', () => {
    const o = given(start({}, { parentRunId: 'boss' })).when(
      call('c1', 'search', {}, { family: family({ ancestors: [parent()] }) }),
    );
    expect(o.before.decision).toBe('execute');
  });

  it('when its parent ends, then it ends PARTIAL with the reason and the gap named', () => {
    const o = given(start({}, { parentRunId: 'boss' }), step('c1', 'search', {}, 'h')).when(
      endWithParent('STOPPED_LOOP_GUARD'),
    );
    expect(o.report).toMatchObject({
      terminalState: 'PARTIAL',
      guardReason: 'parent_stopped',
      gaps: [expect.stringContaining('parent run boss ended (STOPPED_LOOP_GUARD)')],
    });
    expect(o.state.status).toBe('PARTIAL');
  });
});

describe('a supervisor run', () => {
  it('given its sub-agents used 8 steps, when it has used 2 of maxSteps 10, then its next call is stopped', () => {
    const s = given(
      start({ maxSteps: 10 }),
      step('c1', 'plan', {}, 'h1'),
      step('c2', 'plan', { n: 2 }, 'h2'),
    );
    const below = { steps: 8, toolCalls: 8, tokens: 100, costUsd: 0 };
    const o = s.when(call('c3', 'plan', { n: 3 }, { family: family({ below }) }));
    expect(o.before).toMatchObject({ decision: 'stop_partial', rule: 'step_budget' });
    expect(o.before.evidence.counts).toMatchObject({ steps: 10 });
  });

  it('when it is cancelled, then its stop report lists its children and their states', () => {
    const children = [
      { runId: 'w1', state: 'RUNNING' as const },
      { runId: 'w2', state: 'COMPLETED' as const },
    ];
    const o = given(start()).when({ type: 'Cancel', reason: 'user cancelled', children });
    expect(o.report?.children).toEqual(children);
  });

  it('when a loop rule stops it, then the report lists its children too', () => {
    const children = [{ runId: 'w1', state: 'RUNNING' as const }];
    const s = given(start(), step('c1', 's', { q: 1 }, 'h'), step('c2', 's', { q: 1 }, 'h'));
    const o = s.when(call('c3', 's', { q: 1 }, { family: family({ children }) }));
    expect(o.report).toMatchObject({ guardReason: 'exact_repeat', children });
  });
});

describe("a supervisor's cost estimate", () => {
  it('given its sub-agents spent $0.80 of its $1, when it asks for a $0.30 call, then it is refused', () => {
    const below = { steps: 3, toolCalls: 3, tokens: 0, costUsd: 0.8 };
    const o = given(start({ maxCostUsd: 1 })).when(
      call('c1', 'render', {}, { costEstimateUsd: 0.3, family: family({ below }) }),
    );
    expect(o.before).toMatchObject({ decision: 'refuse', rule: 'cost_estimate' });
  });
});
