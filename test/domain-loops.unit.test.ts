import { describe, expect, it } from 'vitest';
import { call, given, result, start, step } from './support/given.js';

describe('exact_repeat', () => {
  it('refuses the 3rd identical call with identical results (sameCallLimit 2) and stops the run', () => {
    const s = given(
      start({ sameCallLimit: 2 }),
      step('c1', 'search', { q: 'x' }, 'h1'),
      step('c2', 'search', { q: 'x' }, 'h1'),
    );
    const o = s.when(call('c3', 'search', { q: 'x' }));
    expect(o.types).toEqual(['ToolCallRequested', 'GuardDecided', 'RunStopped']);
    expect(o.before).toMatchObject({ callId: 'c3', decision: 'stop_partial', rule: 'exact_repeat' });
    const fingerprint = o.of('ToolCallRequested')[0]?.fingerprint;
    expect(o.before.evidence).toEqual({
      fingerprints: [fingerprint],
      counts: { repeats: 2 },
      thresholds: { sameCallLimit: 2 },
    });
    expect(o.report).toMatchObject({ terminalState: 'STOPPED_LOOP_GUARD', guardReason: 'exact_repeat' });
    expect(o.state.status).toBe('STOPPED_LOOP_GUARD');
    expect(o.state.steps).toBe(2);
    expect(o.state.inFlight).toBeNull();
  });

  it('the 2nd identical call still runs', () => {
    const o = given(start(), step('c1', 'search', { q: 'x' }, 'h1')).when(call('c2', 'search', { q: 'x' }));
    expect(o.before).toMatchObject({ decision: 'execute', rule: null });
  });

  it('honours a larger sameCallLimit', () => {
    const s = given(
      start({ sameCallLimit: 3, noProgressLimit: 10 }),
      step('c1', 't', {}, 'h'),
      step('c2', 't', {}, 'h'),
    );
    expect(s.when(call('c3', 't', {})).before.decision).toBe('execute');
    s.given(result('c3', 'h'));
    expect(s.when(call('c4', 't', {})).before).toMatchObject({
      decision: 'stop_partial',
      rule: 'exact_repeat',
    });
  });

  it('key-order and whitespace jitter still count as repeats', () => {
    const s = given(
      start(),
      step('c1', 'search', { q: 'refund policy', lang: 'en' }, 'h1'),
      step('c2', 'search', { lang: 'en ', q: '  refund policy' }, 'h1'),
    );
    const o = s.when(call('c3', 'search', { q: 'refund policy\n', lang: '\ten', timestamp: 42 }));
    expect(o.before).toMatchObject({ decision: 'stop_partial', rule: 'exact_repeat' });
  });

  it('page / cursor changes are not repeats', () => {
    const s = given(start({ noProgressLimit: 10 }));
    for (let page = 1; page <= 6; page++) {
      const o = s.when(call(`p${page}`, 'list', { page }));
      expect(o.before.decision, `page ${page}`).toBe('execute');
      s.given(result(`p${page}`, 'same-empty-page'));
    }
    for (const cursor of ['a1', 'b2', 'c3', 'd4']) {
      const o = s.when(call(cursor, 'list', { cursor }));
      expect(o.before.decision, cursor).toBe('execute');
      s.given(result(cursor, 'same'));
    }
    expect(s.state.status).toBe('RUNNING');
  });

  it('identical calls whose results change (paging by state, polling) are never blocked', () => {
    const s = given(start());
    for (let i = 1; i <= 12; i++) {
      const o = s.when(call(`c${i}`, 'next_batch', { queue: 'jobs' }));
      expect(o.before.decision, `call ${i}`).toBe('execute');
      const done = s.when(result(`c${i}`, `batch-${i}`));
      expect(done.after.decision).toBe('continue');
    }
    expect(s.state.steps).toBe(12);
  });
});

describe('short_cycle', () => {
  it('A-B-A-B: refuses the 4th call when the 3rd repeated with the same result', () => {
    const s = given(
      start(),
      step('c1', 'read', { f: 'a' }, 'ha'),
      step('c2', 'read', { f: 'b' }, 'hb'),
      step('c3', 'read', { f: 'a' }, 'ha'),
    );
    const o = s.when(call('c4', 'read', { f: 'b' }));
    expect(o.before).toMatchObject({ decision: 'stop_partial', rule: 'short_cycle' });
    expect(o.before.evidence.fingerprints).toHaveLength(2);
    expect(o.before.evidence.counts).toEqual({ period: 2, cycles: 2 });
    expect(o.report?.terminalState).toBe('STOPPED_LOOP_GUARD');
  });

  it('A-B-A-B is allowed when the repeated A brought a new result', () => {
    const s = given(
      start(),
      step('c1', 'read', { f: 'a' }, 'ha'),
      step('c2', 'read', { f: 'b' }, 'hb'),
      step('c3', 'read', { f: 'a' }, 'ha-changed'),
    );
    expect(s.when(call('c4', 'read', { f: 'b' })).before.decision).toBe('execute');
  });

  it('A-B-C-A-B-C: refuses the 6th call', () => {
    const s = given(
      start(),
      step('c1', 'read', { f: 'a' }, 'ha'),
      step('c2', 'read', { f: 'b' }, 'hb'),
      step('c3', 'read', { f: 'c' }, 'hc'),
      step('c4', 'read', { f: 'a' }, 'ha'),
      step('c5', 'read', { f: 'b' }, 'hb'),
    );
    const o = s.when(call('c6', 'read', { f: 'c' }));
    expect(o.before).toMatchObject({ decision: 'stop_partial', rule: 'short_cycle' });
    expect(o.before.evidence.counts.period).toBe(3);
    expect(o.before.evidence.fingerprints).toHaveLength(3);
  });
});

describe('no_progress', () => {
  it('stops after the call once noProgressLimit calls in a row brought nothing new', () => {
    const s = given(
      start({ noProgressLimit: 3 }),
      step('c1', 'read', { f: 'a' }, 'ha'),
      step('c2', 'read', { f: 'b' }, 'hb'),
      step('c3', 'read', { f: 'c' }, 'hc'),
      step('c4', 'read', { f: 'a' }, 'ha'),
      step('c5', 'read', { f: 'c' }, 'hc'),
    );
    expect(s.state.noProgress).toBe(2);
    const req = s.when(call('c6', 'read', { f: 'b' }));
    expect(req.before.decision).toBe('execute');
    const o = s.when(result('c6', 'hb'));
    expect(o.after).toMatchObject({ decision: 'stop', rule: 'no_progress' });
    expect(o.after.evidence.counts).toEqual({ noProgress: 3 });
    expect(o.after.evidence.thresholds).toEqual({ noProgressLimit: 3 });
    expect(o.report).toMatchObject({ terminalState: 'STOPPED_LOOP_GUARD', guardReason: 'no_progress' });
  });

  it('an empty output repeated across different calls is not a loop', () => {
    const s = given(start({ noProgressLimit: 2 }));
    for (let i = 1; i <= 6; i++) {
      s.given(call(`c${i}`, 'edit', { line: i }));
      expect(s.when(result(`c${i}`, 'ok')).after.decision).toBe('continue');
    }
    expect(s.state.noProgress).toBe(0);
  });

  it('a user turn is new information and resets the count', () => {
    const s = given(
      start({ noProgressLimit: 2, sameCallLimit: 10 }),
      step('c1', 't', {}, 'h'),
      step('c2', 't', {}, 'h'),
      step('c3', 't', {}, 'h', {}, { afterUserTurn: true }),
    );
    expect(s.state.noProgress).toBe(0);
    s.given(call('c4', 't', {}));
    expect(s.when(result('c4', 'h')).after.decision).toBe('continue');
  });

  it('a higher progress version from the caller is new information', () => {
    const s = given(
      start({ noProgressLimit: 2, sameCallLimit: 10 }),
      step('c1', 't', {}, 'h'),
      step('c2', 't', {}, 'h'),
    );
    s.given(call('c3', 't', {}));
    const o = s.when(result('c3', 'h', { progressVersion: 1 }));
    expect(o.after.decision).toBe('continue');
    expect(o.state.progressVersion).toBe(1);
    expect(o.state.noProgress).toBe(0);
  });
});

describe('near_duplicate', () => {
  const queries = [
    'refund policy for enterprise customers',
    'refund policies for enterprise customers',
    'enterprise customers refund policy',
    'refund policy enterprise customer',
    'the refund policy for enterprise customers',
    'refund policy for enterprise customers?',
  ];

  it('refuses a rephrased query once `limit` rephrasings in a row got the same answer as before', () => {
    const s = given(
      start({ nearDuplicate: { threshold: 0.7, limit: 2 } }),
      step('c0', 'search', { q: queries[0] }, 'r0'),
    );
    const o1 = s.when(call('c1', 'search', { q: queries[1] }));
    expect(o1.before.decision).toBe('execute');
    expect(o1.of('ToolCallRequested')[0]?.similarTo).toBe(JSON.stringify({ q: queries[0] }));
    expect(o1.of('ToolCallRequested')[0]?.similarity).toBeGreaterThanOrEqual(0.7);
    s.given(result('c1', 'r0'), step('c2', 'search', { q: queries[3] }, 'r0'));
    const o = s.when(call('c3', 'search', { q: queries[4] }));
    expect(o.before).toMatchObject({ decision: 'stop_partial', rule: 'near_duplicate' });
    expect(o.before.evidence.counts).toEqual({ nearDuplicates: 2 });
    expect(o.before.evidence.thresholds).toMatchObject({ threshold: 0.7, limit: 2 });
    expect(o.before.evidence.thresholds.similarity).toBeGreaterThanOrEqual(0.7);
    expect(o.report?.guardReason).toBe('near_duplicate');
  });

  it('rephrasings that each bring a different answer are new information, never refused', () => {
    const s = given(start({ nearDuplicate: { threshold: 0.7, limit: 1 } }));
    for (const [i, q] of queries.entries()) {
      const o = s.when(call(`c${i}`, 'search', { q }));
      expect(o.before.decision).toBe('execute');
      s.given(result(`c${i}`, `answer-${i}`));
    }
  });

  it('equal answers that say nothing ("ok") are no evidence: similar edits go on', () => {
    const s = given(start({ nearDuplicate: { threshold: 0.7, limit: 1 } }));
    for (let i = 0; i < 6; i++) {
      const o = s.when(call(`c${i}`, 'edit_file', { path: `src/m${i}.ts`, patch: `try ${i}` }));
      expect(o.before.decision).toBe('execute');
      s.given(result(`c${i}`, 'h-ok', { resultJson: '"ok"' }));
    }
  });

  it('dissimilar queries are not near-duplicates', () => {
    const s = given(start({ nearDuplicate: { threshold: 0.85, limit: 1 } }));
    for (const [i, q] of [
      'weather in Paris',
      'stock price of ACME',
      'how to bake bread',
      'python asyncio',
    ].entries()) {
      const o = s.when(call(`c${i}`, 'search', { q }));
      expect(o.before.decision).toBe('execute');
      expect(o.of('ToolCallRequested')[0]?.similarTo).toBeNull();
      s.given(result(`c${i}`, `r${i}`));
    }
  });

  it('a user turn between rephrasings resets the count', () => {
    const s = given(
      start({ nearDuplicate: { threshold: 0.7, limit: 2 } }),
      step('c0', 'search', { q: queries[0] }, 'r0'),
      step('c1', 'search', { q: queries[1] }, 'r0'),
      step('c2', 'search', { q: queries[2] }, 'r0', {}, { afterUserTurn: true }),
      step('c3', 'search', { q: queries[3] }, 'r0'),
    );
    expect(s.when(call('c4', 'search', { q: queries[4] })).before.decision).toBe('execute');
  });

  it('the call that comes right after a user turn is not refused as a near-duplicate', () => {
    const s = given(
      start({ nearDuplicate: { threshold: 0.7, limit: 2 } }),
      step('c0', 'search', { q: queries[0] }, 'r0'),
      step('c1', 'search', { q: queries[1] }, 'r0'),
      step('c2', 'search', { q: queries[2] }, 'r0'),
    );
    const o = s.when(call('c3', 'search', { q: queries[3] }, { afterUserTurn: true }));
    const without = given(
      start({ nearDuplicate: { threshold: 0.7, limit: 2 } }),
      step('c0', 'search', { q: queries[0] }, 'r0'),
      step('c1', 'search', { q: queries[1] }, 'r0'),
      step('c2', 'search', { q: queries[2] }, 'r0'),
    );
    expect(without.when(call('c3', 'search', { q: queries[3] })).before.rule).toBe('near_duplicate');
    expect(o.before.decision).toBe('execute');
  });

  it('paging through one long query with new results each page is not a near-duplicate loop', () => {
    const s = given(start());
    for (let page = 1; page <= 10; page++) {
      const o = s.when(call(`p${page}`, 'search', { q: 'refund policy for enterprise customers', page }));
      expect(o.before.decision, `page ${page}: ${o.before.rule}`).toBe('execute');
      s.given(result(`p${page}`, `results-page-${page}`));
    }
  });
});

describe('rule actions', () => {
  const repeats = (rules: Record<string, string>) =>
    given(
      start({ rules: rules as never, noProgressLimit: 100 }),
      step('c1', 't', { a: 1 }, 'h'),
      step('c2', 't', { a: 1 }, 'h'),
    );

  it('warn_first: the first firing executes with a warning, the next stops', () => {
    const s = repeats({ exact_repeat: 'warn_first' });
    const first = s.when(call('c3', 't', { a: 1 }));
    expect(first.before).toMatchObject({ decision: 'execute', rule: 'exact_repeat' });
    expect(first.before.warning).toContain('already called 2 times');
    expect(first.types).not.toContain('RunStopped');
    s.given(result('c3', 'h'));
    const next = s.when(call('c4', 't', { a: 1 }));
    expect(next.before).toMatchObject({ decision: 'stop_partial', rule: 'exact_repeat', warning: null });
    expect(next.state.status).toBe('STOPPED_LOOP_GUARD');
  });

  it('warn_only: every firing executes with a warning', () => {
    const s = repeats({ exact_repeat: 'warn_only' });
    for (let i = 3; i <= 6; i++) {
      const o = s.when(call(`c${i}`, 't', { a: 1 }));
      expect(o.before).toMatchObject({ decision: 'execute', rule: 'exact_repeat' });
      expect(o.before.warning).not.toBeNull();
      s.given(result(`c${i}`, 'h'));
    }
    expect(s.state.status).toBe('RUNNING');
  });

  it('off: the rule never fires', () => {
    const s = repeats({ exact_repeat: 'off' });
    for (let i = 3; i <= 6; i++) {
      const o = s.when(call(`c${i}`, 't', { a: 1 }));
      expect(o.before).toMatchObject({ decision: 'execute', rule: null, warning: null });
      s.given(result(`c${i}`, 'h'));
    }
  });

  it('warn_first on no_progress: continue with a warning, then stop', () => {
    const s = given(
      start({ noProgressLimit: 1, sameCallLimit: 100, rules: { no_progress: 'warn_first' } }),
      step('c1', 't', {}, 'h'),
      call('c2', 't', {}),
    );
    const first = s.when(result('c2', 'h'));
    expect(first.after).toMatchObject({ decision: 'continue', rule: 'no_progress' });
    expect(first.after.warning).not.toBeNull();
    s.given(call('c3', 't', {}));
    expect(s.when(result('c3', 'h')).after).toMatchObject({ decision: 'stop', rule: 'no_progress' });
  });

  it('warn_first on short_cycle: warns then stops on the next firing', () => {
    const s = given(
      start({ rules: { short_cycle: 'warn_first' }, noProgressLimit: 100, sameCallLimit: 100 }),
      step('c1', 'read', { f: 'a' }, 'ha'),
      step('c2', 'read', { f: 'b' }, 'hb'),
      step('c3', 'read', { f: 'a' }, 'ha'),
    );
    const warned = s.when(call('c4', 'read', { f: 'b' }));
    expect(warned.before).toMatchObject({ decision: 'execute', rule: 'short_cycle' });
    s.given(result('c4', 'hb'));
    expect(s.when(call('c5', 'read', { f: 'a' })).before).toMatchObject({
      decision: 'stop_partial',
      rule: 'short_cycle',
    });
  });
});
