import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type DomainEvent,
  initialState,
  isTerminal,
  type RecordedEvent,
  type ResultKind,
  type RunPolicy,
  type RunState,
} from '../src/domain/index.js';
import { type CommandInput, foldRun, RunActor } from '../src/machines/index.js';
import { deps, FakeClock, policy } from './support/given.js';

type Op =
  | {
      readonly op: 'call';
      readonly dt: number;
      readonly tool: string;
      readonly args: { readonly q: string; readonly page?: number };
      readonly estimate: number | null;
      readonly operationKey: string | null;
      readonly kind: ResultKind;
      readonly code: string | null;
      readonly hash: string;
      readonly tokens: number;
      readonly costUsd: number;
      readonly duration: number;
    }
  | { readonly op: 'usage'; readonly dt: number; readonly tokens: number; readonly costUsd: number };

const kind = fc.constantFrom<ResultKind>(
  'SUCCESS',
  'SUCCESS',
  'SUCCESS',
  'SUCCESS',
  'SUCCESS',
  'SUCCESS',
  'RETRYABLE',
  'PENDING',
  'PRECONDITION',
  'FATAL',
);

const callOp: fc.Arbitrary<Op> = fc.record({
  op: fc.constant('call' as const),
  dt: fc.integer({ min: 0, max: 3000 }),
  tool: fc.constantFrom('search', 'read', 'pay'),
  args: fc.oneof(
    fc.record({ q: fc.constantFrom('a', 'b', ' a ', 'refund policy', 'refund policies') }),
    fc.record({ q: fc.constantFrom('a', 'b'), page: fc.integer({ min: 1, max: 3 }) }),
  ),
  estimate: fc.constantFrom(null, null, 0.05, 0.3),
  operationKey: fc.constantFrom(null, null, 'op-1', 'op-2'),
  kind,
  code: fc.constantFrom(null, 'permission_denied', 'boom', 'needs_login'),
  hash: fc.constantFrom('h1', 'h2', 'h3', 'empty'),
  tokens: fc.integer({ min: 0, max: 300 }),
  costUsd: fc.constantFrom(0, 0, 0.01, 0.1, 0.25),
  duration: fc.integer({ min: 0, max: 500 }),
});
const usageOp: fc.Arbitrary<Op> = fc.record({
  op: fc.constant('usage' as const),
  dt: fc.integer({ min: 0, max: 1000 }),
  tokens: fc.integer({ min: 0, max: 400 }),
  costUsd: fc.constantFrom(0, 0.02, 0.2),
});
const trace = fc.array(fc.oneof({ weight: 5, arbitrary: callOp }, { weight: 1, arbitrary: usageOp }), {
  minLength: 1,
  maxLength: 60,
});

const runPolicy: fc.Arbitrary<RunPolicy> = fc
  .record({
    maxSteps: fc.integer({ min: 1, max: 25 }),
    maxToolCalls: fc.integer({ min: 1, max: 40 }),
    maxTokens: fc.option(fc.integer({ min: 100, max: 5000 }), { nil: null }),
    maxCostUsd: fc.option(fc.constantFrom(0.1, 0.5, 1, 2), { nil: null }),
    maxWallClockMs: fc.option(fc.integer({ min: 2000, max: 60_000 }), { nil: null }),
    maxConsecutiveSameTool: fc.option(fc.integer({ min: 1, max: 6 }), { nil: null }),
    payMaxCalls: fc.option(fc.integer({ min: 0, max: 4 }), { nil: null }),
    maxRetries: fc.integer({ min: 0, max: 3 }),
    maxPolls: fc.integer({ min: 0, max: 3 }),
  })
  .map(({ payMaxCalls, ...limits }) =>
    policy({
      ...limits,
      tools: {
        pay: { sideEffect: true, maxCalls: payMaxCalls, costUsd: 0.1 },
        search: { volatileArgs: ['ts'] },
      },
    }),
  );

interface Step {
  readonly before: RunState;
  readonly atMs: number;
  readonly tool: string;
  readonly estimate: number | null;
  readonly decision: string | null;
}

/** Drives a live actor through a trace with a fake clock: request, and a result for every executed call. */
function drive(p: RunPolicy, ops: readonly Op[]) {
  const clock = new FakeClock(1_000);
  const actor = new RunActor('prop', deps, clock);
  const log: RecordedEvent[] = [];
  const steps: Step[] = [];
  const send = (cmd: CommandInput): DomainEvent[] => {
    const r = actor.propose(cmd);
    if (!r.ok) return [];
    log.push(...r.value);
    actor.commit(r.value);
    return r.value.map((rec) => rec.event);
  };
  send({ type: 'StartRun', runId: 'prop', policy: p });
  ops.forEach((o, i) => {
    clock.advance(o.dt);
    if (o.op === 'usage') {
      send({ type: 'RecordModelUsage', tokensIn: o.tokens, tokensOut: 0, costUsd: o.costUsd });
      return;
    }
    const before = actor.state;
    const events = send({
      type: 'RequestToolCall',
      callId: `c${i}`,
      tool: o.tool,
      args: o.args,
      ...(o.estimate === null ? {} : { costEstimateUsd: o.estimate }),
      ...(o.operationKey === null ? {} : { operationKey: o.operationKey }),
    });
    const d = events.find((e) => e.type === 'GuardDecided');
    const decision = d?.type === 'GuardDecided' ? d.decision : null;
    steps.push({
      before,
      atMs: clock.now(),
      tool: o.tool,
      estimate: o.estimate ?? p.tools[o.tool]?.costUsd ?? null,
      decision,
    });
    if (decision !== 'execute') return;
    clock.advance(o.duration);
    send({
      type: 'CompleteToolCall',
      callId: `c${i}`,
      kind: o.kind,
      resultHash: o.hash,
      tokens: o.tokens,
      costUsd: o.costUsd,
      ...(o.code === null ? {} : { code: o.code }),
      resultJson: '{"ok":true}',
    });
  });
  return { actor, clock, log, steps };
}

const params = { numRuns: 300 };

describe('properties of random traces', () => {
  it('every trace stays within its budgets', () => {
    fc.assert(
      fc.property(runPolicy, trace, (p, ops) => {
        const { actor, steps } = drive(p, ops);
        const executed = steps.filter((s) => s.decision === 'execute');
        expect(actor.state.steps).toBe(executed.length);
        expect(executed.length).toBeLessThanOrEqual(p.maxSteps ?? Infinity);
        expect(executed.length).toBeLessThanOrEqual(p.maxToolCalls ?? Infinity);
        expect(executed.filter((s) => s.tool === 'pay').length).toBeLessThanOrEqual(
          p.tools.pay?.maxCalls ?? Infinity,
        );
        let streak = { tool: '', n: 0 };
        for (const s of executed) {
          const b = s.before;
          expect(isTerminal(b.status)).toBe(false);
          expect(b.steps).toBeLessThan(p.maxSteps ?? Infinity);
          expect(b.toolCalls).toBeLessThan(p.maxToolCalls ?? Infinity);
          if (p.maxCostUsd !== null) {
            expect(b.costUsd).toBeLessThan(p.maxCostUsd);
            if (s.estimate !== null) expect(b.costUsd + s.estimate).toBeLessThanOrEqual(p.maxCostUsd);
          }
          if (p.maxTokens !== null) expect(b.tokens).toBeLessThan(p.maxTokens);
          if (p.maxWallClockMs !== null) expect(s.atMs - b.startedAtMs).toBeLessThan(p.maxWallClockMs);
          streak = streak.tool === s.tool ? { tool: s.tool, n: streak.n + 1 } : { tool: s.tool, n: 1 };
          expect(streak.n).toBeLessThanOrEqual(p.maxConsecutiveSameTool ?? Infinity);
        }
      }),
      params,
    );
  });

  it('a stopped run never executes another call', () => {
    fc.assert(
      fc.property(runPolicy, trace, (p, ops) => {
        const { steps } = drive(p, ops);
        const firstEnd = steps.findIndex((s) => isTerminal(s.before.status));
        if (firstEnd >= 0) {
          for (const s of steps.slice(firstEnd)) expect(s.decision).toBe('refuse');
        }
      }),
      params,
    );
  });

  it('the same trace always gives the same decisions', () => {
    fc.assert(
      fc.property(runPolicy, trace, (p, ops) => {
        const a = drive(p, ops);
        const b = drive(p, ops);
        expect(b.log).toEqual(a.log);
      }),
      params,
    );
  });

  it('restoring from the events gives the live snapshot (actor and fold)', () => {
    fc.assert(
      fc.property(runPolicy, trace, (p, ops) => {
        const { actor, clock, log } = drive(p, ops);
        const restored = new RunActor('prop', deps, clock, log);
        expect(restored.state).toEqual(actor.state);
        expect(restored.status).toBe(actor.status);
        expect(log.reduce(foldRun, initialState('prop'))).toEqual(actor.state);
        expect(actor.status).toBe(actor.state.status);
      }),
      params,
    );
  });
});

describe('the generator', () => {
  it('reaches budgets, loop rules and result classes, so the properties are not vacuous', () => {
    const rules = new Set<string>();
    const statuses = new Set<string>();
    let executed = 0;
    for (const [p, ops] of fc.sample(fc.tuple(runPolicy, trace), { numRuns: 400, seed: 7 })) {
      const { actor, log } = drive(p, ops);
      for (const r of log)
        if (r.event.type === 'GuardDecided' && r.event.rule !== null) rules.add(r.event.rule);
      statuses.add(actor.status);
      executed += actor.state.steps;
    }
    expect(executed).toBeGreaterThan(400);
    for (const rule of [
      'step_budget',
      'tool_budget',
      'cost_estimate',
      'exact_repeat',
      'retryable',
      'pending',
      'idempotency',
      'run_stopped',
    ])
      expect(rules, rule).toContain(rule);
    for (const status of ['RUNNING', 'STOPPED_LOOP_GUARD', 'NEEDS_HUMAN', 'FAILED'])
      expect(statuses, status).toContain(status);
  });
});
