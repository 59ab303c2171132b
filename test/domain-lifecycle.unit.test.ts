import { describe, expect, it } from 'vitest';
import type { RunPolicy } from '../src/domain/index.js';
import {
  call,
  cancel,
  checkpoint,
  finish,
  given,
  result,
  resume,
  Scenario,
  start,
  step,
  usage,
} from './support/given.js';

const looped = (extra: Parameters<typeof start>[0] = {}) =>
  given(
    start(extra, { progressVersion: 4 }),
    step('c1', 'search', { q: 'x' }, 'h1'),
    step('c2', 'search', { q: 'x' }, 'h1'),
    call('c3', 'search', { q: 'x' }),
  );

describe('starting', () => {
  it('StartRun records the policy and the run goes RUNNING; a second start is refused', () => {
    const s = new Scenario();
    const o = s.when(start({ maxSteps: 7 }, { tenant: 'acme', progressVersion: 2 }));
    expect(o.types).toEqual(['RunStarted']);
    expect(o.state).toMatchObject({ status: 'RUNNING', tenant: 'acme', progressVersion: 2 });
    expect(o.state.policy?.maxSteps).toBe(7);
    expect(s.when(start()).error?.code).toBe('run_exists');
  });

  it('commands before a start are refused with run_not_started', () => {
    expect(new Scenario().when(call('c1', 't', {})).error?.code).toBe('run_not_started');
  });

  it('calls of one run go one at a time', () => {
    const s = given(start(), call('c1', 't', {}));
    expect(s.when(call('c2', 't', { a: 1 })).error?.code).toBe('call_in_flight');
    expect(s.when(result('nope', 'h')).error?.code).toBe('unknown_call');
  });
});

describe('a stopped run', () => {
  it('refuses every further call with run_stopped and no second stop report', () => {
    const s = looped();
    expect(s.state.status).toBe('STOPPED_LOOP_GUARD');
    for (const [id, tool] of [
      ['c4', 'search'],
      ['c5', 'other'],
    ] as const) {
      const o = s.when(call(id, tool, { z: id }));
      expect(o.before).toMatchObject({ decision: 'refuse', rule: 'run_stopped' });
      expect(o.before.message).toContain('STOPPED_LOOP_GUARD: exact_repeat');
      expect(o.types).not.toContain('RunStopped');
    }
    expect(s.state.steps).toBe(2);
    expect(s.when(finish(true)).error?.code).toBe('run_ended');
  });
});

describe('Finish and Cancel', () => {
  it('Finish verified -> COMPLETED', () => {
    const o = given(start(), step('c1', 'read', {}, 'h')).when(finish(true));
    expect(o.report).toMatchObject({
      terminalState: 'COMPLETED',
      guardReason: 'verified',
      gaps: [],
      nextAllowedAction: 'none',
    });
    expect(o.state.status).toBe('COMPLETED');
  });

  it('Finish unverified -> PARTIAL with its gaps', () => {
    const o = given(start()).when(finish(false, ['no invoice for March']));
    expect(o.report).toMatchObject({
      terminalState: 'PARTIAL',
      guardReason: 'unverified',
      gaps: ['no invoice for March'],
      nextAllowedAction: 'deliver_partial_result',
    });
  });

  it('Cancel -> PARTIAL with the reason kept', () => {
    const o = given(start()).when(cancel('user closed the tab'));
    expect(o.report).toMatchObject({
      terminalState: 'PARTIAL',
      guardReason: 'cancelled',
      gaps: ['user closed the tab'],
    });
    expect(o.report?.message).toContain('user closed the tab');
    expect(o.state.status).toBe('PARTIAL');
  });

  it('Fail -> FAILED with the reason kept', () => {
    const o = given(start()).when({ type: 'Fail', reason: 'the account does not exist' });
    expect(o.report).toMatchObject({ terminalState: 'FAILED', gaps: ['the account does not exist'] });
    expect(o.state.status).toBe('FAILED');
  });

  it('a run does not end while a call has no result yet', () => {
    const s = given(start(), call('c1', 't', {}));
    expect(s.when(finish(true)).error?.code).toBe('call_in_flight');
    s.given(result('c1', 'h'));
    expect(s.when(finish(true)).state.status).toBe('COMPLETED');
  });
});

describe('Resume', () => {
  it('without a precondition change is refused with precondition_unchanged', () => {
    const s = looped();
    for (const change of ['', '   ']) {
      const o = s.when(resume(change));
      expect(o.error?.code).toBe('precondition_unchanged');
      expect(o.events).toEqual([]);
    }
    expect(s.state.status).toBe('STOPPED_LOOP_GUARD');
  });

  it('after STOPPED_LOOP_GUARD restores RUNNING, keeps the progress version and starts the repeat history over', () => {
    const s = looped();
    const o = s.when(resume('  the index was rebuilt ', { approvedBy: 'bob' }));
    expect(o.of('RunResumed')).toEqual([
      {
        type: 'RunResumed',
        preconditionChange: 'the index was rebuilt',
        approvedBy: 'bob',
        fromCheckpoint: null,
        progressVersion: 4,
        policy: null,
      },
    ]);
    expect(o.state).toMatchObject({
      status: 'RUNNING',
      progressVersion: 4,
      window: [],
      noProgress: 0,
      resumes: 1,
    });
    expect(o.state.report).toBeNull();
    expect(s.when(call('c4', 'search', { q: 'x' })).before.decision).toBe('execute');
  });

  it('after a short_cycle stop, the repeat history starts over (the cycle is not re-detected at once)', () => {
    const s = given(
      start(),
      step('c1', 'read', { f: 'a' }, 'ha'),
      step('c2', 'read', { f: 'b' }, 'hb'),
      step('c3', 'read', { f: 'a' }, 'ha'),
      call('c4', 'read', { f: 'b' }),
    );
    expect(s.state.report?.guardReason).toBe('short_cycle');
    s.given(resume('new hint from the user'));
    const o = s.when(call('c5', 'read', { f: 'b' }));
    expect(o.before.decision, `refused by ${o.before.rule}`).toBe('execute');
  });

  it('after a warn_first rule stopped, a resumed run is warned again before being stopped', () => {
    const s = looped({ rules: { exact_repeat: 'warn_first' }, noProgressLimit: 100 });
    s.given(result('c3', 'h1'), call('c4', 'search', { q: 'x' }));
    expect(s.state.report?.guardReason).toBe('exact_repeat');
    s.given(
      resume('new approach'),
      step('r1', 'search', { q: 'x' }, 'h1'),
      step('r2', 'search', { q: 'x' }, 'h1'),
    );
    const o = s.when(call('r3', 'search', { q: 'x' }));
    expect(o.before, 'warn_first should warn again after the resume').toMatchObject({
      decision: 'execute',
      rule: 'exact_repeat',
    });
  });

  it('resumes from the last checkpoint', () => {
    const s = given(
      start(),
      step('c1', 'read', {}, 'h'),
      checkpoint('cp-1'),
      step('c2', 'x', {}, 'h'),
      step('c3', 'x', {}, 'h'),
      call('c4', 'x', {}),
    );
    expect(s.state.status).toBe('STOPPED_LOOP_GUARD');
    expect(s.when(resume('fixed')).of('RunResumed')[0]?.fromCheckpoint).toBe('cp-1');
  });

  it('a spent budget is not outrun by a resume without a raised limit', () => {
    const s = given(start({ maxSteps: 1 }), step('c1', 'read', {}, 'h'), call('c2', 'read', { f: 2 }));
    expect(s.state.report?.guardReason).toBe('step_budget');
    expect(s.when(resume('please')).error?.code).toBe('budget_still_spent');
    const raised = { ...(s.state.policy as RunPolicy), maxSteps: 5 };
    const o = s.when(resume('budget raised', { policy: raised, approvedBy: 'ops' }));
    expect(o.state.status).toBe('RUNNING');
    expect(s.when(call('c3', 'read', { f: 3 })).before.decision).toBe('execute');
  });

  it('NEEDS_HUMAN resumes once a person recorded the change', () => {
    const s = given(
      start(),
      call('c1', 'pay', {}),
      result('c1', 'e', { kind: 'FATAL', code: 'permission_denied' }),
    );
    expect(s.state.status).toBe('NEEDS_HUMAN');
    expect(s.when(resume('granted payments:write', { approvedBy: 'carol' })).state.status).toBe('RUNNING');
  });
});

describe('the stop report', () => {
  it('holds every field: state, reason, completed work, checkpoint, precondition, resume hints, evidence, spend', () => {
    const s = given(
      start({ tools: { pay: { sideEffect: true } } }, { atMs: 1_000 }),
      step(
        'c1',
        'pay',
        { amount: 5 },
        'r',
        { resultJson: '{"id":"R1"}', tokens: 40, costUsd: 0.02, atMs: 1_100 },
        { operationKey: 'op-1', atMs: 1_050 },
      ),
      usage(100, 60, 0.03),
      checkpoint('after-payment'),
      step('c2', 'search', { q: 'x' }, 'h', { tokens: 10, atMs: 1_300 }, { atMs: 1_200 }),
      step('c3', 'search', { q: 'x' }, 'h', { atMs: 1_500 }, { atMs: 1_400 }),
    );
    const o = s.when(call('c4', 'search', { q: 'x' }, { atMs: 2_000 }));
    const fp = o.of('ToolCallRequested')[0]?.fingerprint;
    expect(o.report).toEqual({
      terminalState: 'STOPPED_LOOP_GUARD',
      guardReason: 'exact_repeat',
      message: expect.stringContaining('already called 2 times'),
      completed: ['pay', 'search'],
      completedOperations: ['op-1'],
      inDoubtOperations: [],
      gaps: [],
      lastSafeCheckpoint: 'after-payment',
      unmetPrecondition: null,
      resumeCondition: expect.stringContaining('precondition change'),
      nextAllowedAction: 'resume_from_checkpoint',
      evidence: { fingerprints: [fp], counts: { repeats: 2 }, thresholds: { sameCallLimit: 2 } },
      spend: { steps: 3, toolCalls: 3, tokens: 210, costUsd: 0.05, elapsedMs: 1_000 },
      children: [],
    });
  });

  it('names the unmet precondition for NEEDS_HUMAN', () => {
    const s = given(start(), call('c1', 'deploy', {}));
    const o = s.when(result('c1', 'e', { kind: 'FATAL', code: 'policy_blocked' }));
    expect(o.report?.unmetPrecondition).toBe('policy_blocked for deploy');
    expect(o.report?.resumeCondition).toContain('resolved by a person');
  });

  it('records completed operations in a checkpoint', () => {
    const s = given(
      start({ tools: { pay: { sideEffect: true } } }),
      step('c1', 'pay', { a: 1 }, 'r', { resultJson: '{}' }, { operationKey: 'op-a' }),
    );
    expect(s.when(checkpoint()).of('CheckpointRecorded')[0]).toMatchObject({
      completedOperations: ['op-a'],
      progressVersion: 0,
    });
  });
});

describe('every decision names its rule and evidence', () => {
  it('refusals and stops carry the rule, fingerprints, counts and thresholds', () => {
    const s = given(start({ tools: { pay: { maxCalls: 1 } } }), step('p1', 'pay', { a: 1 }, 'h'));
    const refused = s.when(call('p2', 'pay', { a: 2 }));
    const fp = refused.of('ToolCallRequested')[0]?.fingerprint;
    expect(refused.before.rule).toBe('tool_budget');
    expect(refused.before.evidence).toEqual({
      fingerprints: [fp],
      counts: { calls: 1 },
      thresholds: { maxCalls: 1 },
    });
    s.given(step('c1', 'x', {}, 'h'), step('c2', 'x', {}, 'h'));
    const stop = s.when(call('c3', 'x', {}));
    expect(stop.before.rule).toBe('exact_repeat');
    expect(stop.before.evidence.fingerprints).toHaveLength(1);
    expect(Object.keys(stop.before.evidence.counts)).not.toHaveLength(0);
    expect(Object.keys(stop.before.evidence.thresholds)).not.toHaveLength(0);
    expect(stop.report?.evidence).toEqual(stop.before.evidence);
  });
});
