/**
 * A wait the model or an operator reads says how long and until when, never a raw epoch number:
 * the backoff after a retryable result, the poll of a pending one, the wait and the side-effect
 * gate before the time, and the audit's note of the wait.
 */
import { describe, expect, it } from 'vitest';
import { durationText, instantText, waitText } from '../src/domain/index.js';
import { AuditProjection } from '../src/projections/audit-projection.js';
import { call, given, result, start } from './support/given.js';

/** An epoch time as a real clock gives it: a raw number here would be 13 digits long. */
const T0 = 1_733_000_000_000;
const noEpoch = (text: string) => expect(text).not.toMatch(/\d{10,}/);

describe('a wait in words', () => {
  it('a duration in the unit that keeps it short, never negative', () => {
    expect(durationText(250)).toBe('250 ms');
    expect(durationText(2500)).toBe('2.5 s');
    expect(durationText(60_000)).toBe('1 min');
    expect(durationText(90_000)).toBe('1.5 min');
    expect(durationText(7_200_000)).toBe('2 h');
    expect(durationText(-5)).toBe('0 ms');
  });

  it('an instant in ISO 8601 UTC, and a number no date can hold named as one', () => {
    expect(instantText(T0)).toBe('2024-11-30T20:53:20.000Z');
    expect(instantText(9e15)).toBe('epoch ms 9000000000000000');
    expect(waitText(T0 + 2500, T0)).toBe('in 2.5 s (at 2024-11-30T20:53:22.500Z)');
  });
});

describe('the guard says how long a run waits, not at which epoch ms', () => {
  it('after a retryable result, before the time, and at the side-effect gate', () => {
    const s = given(
      start({ tools: { pay: { sideEffect: true } } }, { atMs: T0 }),
      call('c1', 'api', { q: 1 }, { atMs: T0 }),
    );
    const failed = s.when(result('c1', 'e', { kind: 'RETRYABLE', code: 'unavailable', atMs: T0 + 100 }));
    expect(failed.after.message).toBe('Retry api in 1 s (at 2024-11-30T20:53:21.100Z): attempt 1 of 3.');
    const early = s.when(call('c2', 'api', { q: 1 }, { atMs: T0 + 600 }));
    expect(early.before).toMatchObject({ decision: 'wait', rule: 'backoff' });
    expect(early.before.message).toBe('Wait: retry api in 500 ms (at 2024-11-30T20:53:21.100Z), not before.');
    const gated = s.when(call('c3', 'pay', { amount: 5 }, { atMs: T0 + 700 }));
    expect(gated.before).toMatchObject({ decision: 'refuse', rule: 'side_effect_gate' });
    expect(gated.before.message).toContain('in 400 ms (at 2024-11-30T20:53:21.100Z)');
    for (const m of [failed.after.message, early.before.message, gated.before.message]) noEpoch(m);
  });

  it('after a pending result, and in the audit trail', () => {
    const s = given(start({}, { atMs: T0 }), call('c1', 'job', { id: 7 }, { atMs: T0 }));
    const pending = s.when(result('c1', 'queued', { kind: 'PENDING', retryAfterMs: 2500, atMs: T0 + 10 }));
    expect(pending.after.message).toBe('Pending: poll job again in 2.5 s (at 2024-11-30T20:53:22.510Z).');
    const audit = new AuditProjection();
    for (const rec of s.history) audit.apply(rec);
    const notes = (audit.timeline('run-1') ?? [])
      .filter((e) => e.kind === 'note' && e.type === 'waiting')
      .map((e) => (e.kind === 'note' ? e.text : ''));
    expect(notes).toEqual(['pending in 2.5 s (at 2024-11-30T20:53:22.510Z)']);
  });
});
