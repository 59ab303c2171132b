import { describe, expect, it } from 'vitest';
import { call, given, result, resume, start, step } from './support/given.js';

describe('RETRYABLE: bounded retries with backoff', () => {
  it('backs off 1 s, 2 s, 4 s; the run waits; success afterwards continues', () => {
    const s = given(start({ maxRetries: 3 }), call('c1', 'api', { q: 1 }, { atMs: 0 }));
    const r1 = s.when(result('c1', 'e', { kind: 'RETRYABLE', code: 'unavailable', atMs: 100 }));
    expect(r1.after).toMatchObject({ decision: 'retry_after_backoff', rule: 'retryable', waitUntilMs: 1100 });
    expect(r1.of('RunWaiting')).toEqual([
      { type: 'RunWaiting', reason: 'retryable', untilMs: 1100, callId: 'c1' },
    ]);
    expect(r1.state.status).toBe('WAITING');

    s.given(call('c2', 'api', { q: 1 }, { atMs: 1100 }));
    expect(s.state.status).toBe('RUNNING');
    const r2 = s.when(result('c2', 'e', { kind: 'RETRYABLE', atMs: 1200 }));
    expect(r2.after.waitUntilMs).toBe(3200);
    expect(r2.after.evidence.counts).toEqual({ attempt: 2 });

    s.given(call('c3', 'api', { q: 1 }, { atMs: 3200 }));
    const r3 = s.when(result('c3', 'e', { kind: 'RETRYABLE', atMs: 3300 }));
    expect(r3.after.waitUntilMs).toBe(7300);
    expect(r3.after.evidence.thresholds).toMatchObject({ maxRetries: 3, backoffMs: 4000 });

    s.given(call('c4', 'api', { q: 1 }, { atMs: 7300 }));
    const ok = s.when(result('c4', 'data', { atMs: 7400 }));
    expect(ok.after.decision).toBe('continue');
    expect(ok.state.status).toBe('RUNNING');
    expect(ok.state.retries).toEqual({});
  });

  it("uses the server's retry_after_ms when it gave one", () => {
    const s = given(start(), call('c1', 'api', {}, { atMs: 0 }));
    const o = s.when(result('c1', 'e', { kind: 'RETRYABLE', retryAfterMs: 30_000, atMs: 50 }));
    expect(o.after.waitUntilMs).toBe(30_050);
  });

  it('a retry before the time is answered wait; at the time it runs', () => {
    const s = given(
      start(),
      call('c1', 'api', {}, { atMs: 0 }),
      result('c1', 'e', { kind: 'RETRYABLE', atMs: 0 }),
    );
    const early = s.when(call('c2', 'api', {}, { atMs: 500 }));
    expect(early.before).toMatchObject({ decision: 'wait', rule: 'backoff', waitUntilMs: 1000 });
    expect(early.state.status).toBe('WAITING');
    expect(early.state.steps).toBe(1);
    expect(s.when(call('c3', 'api', {}, { atMs: 1000 })).before.decision).toBe('execute');
  });

  it('a side-effecting call while waiting is refused by the side-effect gate', () => {
    const s = given(
      start({ tools: { pay: { sideEffect: true } } }),
      call('c1', 'api', {}, { atMs: 0 }),
      result('c1', 'e', { kind: 'RETRYABLE', atMs: 0 }),
    );
    const o = s.when(call('c2', 'pay', { amount: 5 }, { atMs: 10 }));
    expect(o.before).toMatchObject({ decision: 'refuse', rule: 'side_effect_gate' });
    expect(o.before.evidence.thresholds).toEqual({ waitUntilMs: 1000 });
    const explicit = s.when(call('c3', 'other', {}, { sideEffect: true, atMs: 20 }));
    expect(explicit.before.rule).toBe('side_effect_gate');
    expect(s.state.steps).toBe(1);
  });

  it('a retry before the time is still answered wait after another read-only call ran meanwhile', () => {
    const s = given(
      start(),
      call('c1', 'api', {}, { atMs: 0 }),
      result('c1', 'e', { kind: 'RETRYABLE', atMs: 0 }),
      step('c2', 'read', { f: 'x' }, 'hx', { atMs: 200 }, { atMs: 100 }),
    );
    const o = s.when(call('c3', 'api', {}, { atMs: 300 }));
    expect(o.before).toMatchObject({ decision: 'wait', rule: 'backoff' });
  });

  it('stops with retry_exhausted after maxRetries retries', () => {
    const s = given(start({ maxRetries: 2 }));
    let t = 0;
    const fails = [];
    for (let i = 1; i <= 3; i++) {
      s.given(call(`c${i}`, 'api', {}, { atMs: t }));
      const o = s.when(result(`c${i}`, 'e', { kind: 'RETRYABLE', atMs: t }));
      fails.push(o.after);
      t = o.after.waitUntilMs ?? t;
    }
    expect(fails.map((d) => d.decision)).toEqual(['retry_after_backoff', 'retry_after_backoff', 'stop']);
    expect(fails[2]).toMatchObject({ rule: 'retry_exhausted' });
    expect(fails[2]?.evidence).toMatchObject({ counts: { attempts: 3 }, thresholds: { maxRetries: 2 } });
    expect(s.state.status).toBe('STOPPED_LOOP_GUARD');
    expect(s.state.report?.guardReason).toBe('retry_exhausted');
  });

  it('retried calls with the same result do not count as exact repeats', () => {
    const s = given(start({ maxRetries: 5 }));
    let t = 0;
    for (let i = 1; i <= 4; i++) {
      const o = s.when(call(`c${i}`, 'api', {}, { atMs: t }));
      expect(o.before.decision, `call ${i}`).toBe('execute');
      t = s.when(result(`c${i}`, 'e', { kind: 'RETRYABLE', atMs: t })).after.waitUntilMs ?? t;
    }
  });
});

describe('PENDING: polling', () => {
  it('polling one job whose result changes is never blocked', () => {
    const s = given(start({ maxPolls: 2 }));
    let t = 0;
    for (let i = 1; i <= 10; i++) {
      const o = s.when(call(`p${i}`, 'job_status', { id: 'job-1' }, { atMs: t }));
      expect(o.before.decision, `poll ${i}`).toBe('execute');
      const done = s.when(result(`p${i}`, `progress-${i * 10}%`, { kind: 'PENDING', atMs: t }));
      expect(done.after).toMatchObject({ decision: 'wait_bounded', rule: 'pending', waitUntilMs: t + 1000 });
      t += 1000;
    }
    expect(s.state.status).toBe('WAITING');
  });

  it('a poll before the wait is over is answered wait', () => {
    const s = given(
      start(),
      call('p1', 'job_status', { id: 'j' }, { atMs: 0 }),
      result('p1', 'pending', { kind: 'PENDING', atMs: 0 }),
    );
    expect(s.when(call('p2', 'job_status', { id: 'j' }, { atMs: 999 })).before.decision).toBe('wait');
  });

  it('unchanged PENDING polls stop with poll_exhausted only after maxPolls', () => {
    const maxPolls = 3;
    const s = given(start({ maxPolls }));
    let t = 0;
    const after = [];
    for (let i = 1; i <= maxPolls + 2; i++) {
      const o = s.when(call(`p${i}`, 'job_status', { id: 'job-1' }, { atMs: t }));
      expect(o.before.decision, `poll ${i}`).toBe('execute');
      const done = s.when(result(`p${i}`, 'still-pending', { kind: 'PENDING', atMs: t }));
      after.push(done.after);
      t = done.after.waitUntilMs ?? t;
    }
    expect(after.slice(0, maxPolls + 1).every((d) => d.decision === 'wait_bounded')).toBe(true);
    expect(after[maxPolls + 1]).toMatchObject({ decision: 'stop', rule: 'poll_exhausted' });
    expect(after[maxPolls + 1]?.evidence.thresholds).toEqual({ maxPolls });
    expect(s.state.status).toBe('STOPPED_LOOP_GUARD');
  });

  it('polls wait 1 s after a new result, then 2 s, 4 s, 8 s while unchanged', () => {
    const s = given(start());
    let t = 0;
    const waits = [];
    for (let i = 1; i <= 4; i++) {
      s.given(call(`p${i}`, 'job', { id: 1 }, { atMs: t }));
      const d = s.when(result(`p${i}`, 'same', { kind: 'PENDING', atMs: t })).after;
      waits.push((d.waitUntilMs ?? 0) - t);
      t = d.waitUntilMs ?? t;
    }
    expect(waits).toEqual([1000, 2000, 4000, 8000]);
  });
});

describe('PRECONDITION', () => {
  const blocked = () =>
    given(
      start(),
      call('c1', 'deploy', { env: 'prod' }),
      result('c1', 'e', { kind: 'PRECONDITION', code: 'tests_failing' }),
    );

  it('answers needs_changed_precondition and refuses the same call until something changes', () => {
    const s = given(start(), call('c1', 'deploy', { env: 'prod' }));
    const o = s.when(result('c1', 'e', { kind: 'PRECONDITION', code: 'tests_failing' }));
    expect(o.after).toMatchObject({ decision: 'needs_changed_precondition', rule: 'precondition' });
    const again = s.when(call('c2', 'deploy', { env: 'prod' }));
    expect(again.before).toMatchObject({ decision: 'refuse', rule: 'precondition_unchanged' });
    expect(again.before.message).toContain('tests_failing');
    expect(again.state.status).toBe('RUNNING');
  });

  it('other calls still run', () => {
    const s = blocked();
    expect(s.when(call('c2', 'run_tests', {})).before.decision).toBe('execute');
    s.given(result('c2', 'green'));
    expect(s.when(call('c3', 'deploy', { env: 'staging' })).before.decision).toBe('execute');
  });

  it('a Resume with a recorded precondition change lets the same call run again', () => {
    const s = blocked();
    s.given(resume('tests fixed in PR 42', { approvedBy: 'alice' }));
    expect(s.when(call('c2', 'deploy', { env: 'prod' })).before.decision).toBe('execute');
  });

  it('a user turn reported with another call unblocks it', () => {
    const s = blocked();
    s.given(step('c2', 'read', { f: 'log' }, 'h', {}, { afterUserTurn: true }));
    expect(s.when(call('c3', 'deploy', { env: 'prod' })).before.decision).toBe('execute');
  });

  it('a higher progress version reported with another result unblocks it', () => {
    const s = blocked();
    s.given(step('c2', 'read', { f: 'log' }, 'h', { progressVersion: 1 }));
    expect(s.when(call('c3', 'deploy', { env: 'prod' })).before.decision).toBe('execute');
  });

  it('the same call made right after a user turn is not refused', () => {
    const s = blocked();
    expect(s.when(call('c2', 'deploy', { env: 'prod' }, { afterUserTurn: true })).before.decision).toBe(
      'execute',
    );
  });

  it('the same call carrying a higher progress version is not refused', () => {
    const s = blocked();
    expect(s.when(call('c2', 'deploy', { env: 'prod' }, { progressVersion: 1 })).before.decision).toBe(
      'execute',
    );
  });
});

describe('FATAL', () => {
  it.each(['permission_denied', 'policy_blocked', 'needs_human'])('%s -> NEEDS_HUMAN', (code) => {
    const s = given(start(), call('c1', 'pay', { amount: 1 }));
    const o = s.when(result('c1', 'e', { kind: 'FATAL', code }));
    expect(o.after).toMatchObject({ decision: 'stop', rule: code });
    expect(o.report).toMatchObject({
      terminalState: 'NEEDS_HUMAN',
      guardReason: code,
      unmetPrecondition: `${code} for pay`,
      nextAllowedAction: 'human_review',
    });
    expect(o.state.status).toBe('NEEDS_HUMAN');
  });

  it.each(['bad_request', 'not_found', undefined])('%s -> FAILED', (code) => {
    const s = given(start(), call('c1', 'pay', { amount: 1 }));
    const o = s.when(result('c1', 'e', code === undefined ? { kind: 'FATAL' } : { kind: 'FATAL', code }));
    expect(o.after).toMatchObject({ decision: 'stop', rule: code ?? 'fatal' });
    expect(o.report).toMatchObject({ terminalState: 'FAILED', unmetPrecondition: null });
    expect(o.state.status).toBe('FAILED');
  });
});

describe('idempotent side effects', () => {
  const paid = () =>
    given(
      start({ tools: { pay: { sideEffect: true } } }),
      call('c1', 'pay', { amount: 5 }, { operationKey: 'order-1/pay' }),
      result('c1', 'receipt', { resultJson: '{"receipt":"R-1"}' }),
    );

  it('claims before and completes after the call', () => {
    const s = given(start({ tools: { pay: { sideEffect: true } } }));
    const req = s.when(call('c1', 'pay', { amount: 5 }, { operationKey: 'op' }));
    expect(req.types).toEqual(['ToolCallRequested', 'GuardDecided', 'OperationClaimed']);
    const done = s.when(result('c1', 'r', { resultJson: '{"ok":true}' }));
    expect(done.of('OperationCompleted')).toEqual([
      { type: 'OperationCompleted', operationKey: 'op', callId: 'c1', resultJson: '{"ok":true}' },
    ]);
  });

  it('a completed operation key returns the recorded result and never runs again', () => {
    const s = paid();
    for (const id of ['c2', 'c3']) {
      const o = s.when(call(id, 'pay', { amount: 5 }, { operationKey: 'order-1/pay' }));
      expect(o.before).toMatchObject({ decision: 'return_cached_success', rule: 'idempotency' });
      expect(o.types).not.toContain('OperationClaimed');
      expect(o.state.operations['order-1/pay']).toMatchObject({
        status: 'completed',
        resultJson: '{"receipt":"R-1"}',
      });
    }
    expect(s.state.steps).toBe(1);
    expect(s.state.perTool.pay).toBe(1);
  });

  it('a completion known only to the shared ledger is returned too', () => {
    const s = given(start({ tools: { pay: { sideEffect: true } } }));
    const o = s.when(
      call(
        'c1',
        'pay',
        { amount: 5 },
        { operationKey: 'k', ledger: { status: 'completed', resultJson: '{"r":1}' } },
      ),
    );
    expect(o.before.decision).toBe('return_cached_success');
    expect(s.state.steps).toBe(0);
  });

  it('an operation in flight in another run is answered wait', () => {
    const s = given(start({ tools: { pay: { sideEffect: true } } }));
    const o = s.when(
      call('c1', 'pay', {}, { operationKey: 'k', ledger: { status: 'claimed', byRun: 'run-2' } }),
    );
    expect(o.before).toMatchObject({ decision: 'wait', rule: 'operation_in_flight' });
  });

  it('an in-doubt outcome stops the run for a person and is never retried', () => {
    const s = given(
      start({ tools: { pay: { sideEffect: true } } }),
      call('c1', 'pay', {}, { operationKey: 'k' }),
    );
    const o = s.when(result('c1', 'e', { kind: 'RETRYABLE', code: 'timeout', inDoubt: true }));
    expect(o.after).toMatchObject({ decision: 'stop', rule: 'in_doubt' });
    expect(o.report).toMatchObject({ terminalState: 'NEEDS_HUMAN', inDoubtOperations: ['k'] });
  });
});
