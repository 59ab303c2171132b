import { describe, expect, it } from 'vitest';
import {
  callIdentity,
  canonicalJson,
  countLabels,
  findPingPong,
  findStuckStreak,
} from '../src/eval/index.js';
import type { TraceCall, TraceRun } from '../src/trace/trace-run.js';

type Spec = readonly [tool: string, args: Record<string, unknown>, result: string];

function run(specs: readonly Spec[], success: boolean | null = false): TraceRun {
  const calls: TraceCall[] = specs.map(([tool, args, result], step) => ({
    step,
    tool,
    args,
    result,
    result_sha256: `sha:${result}`,
    after_user_turn: step === 0,
  }));
  return { run_id: 'fixture/1', outcome: { success }, calls };
}

const A: Spec = ['search', { q: 'a' }, 'ra'];
const B: Spec = ['lookup', { k: 'b' }, 'rb'];
const C: Spec = ['finish', { answer: 'c' }, 'done'];

describe('identity', () => {
  it('sorts keys at every depth and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { z: 1, y: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[2,{"y":2,"z":1}]},"b":1}',
    );
    expect(callIdentity({ tool: 't', args: { x: { b: 1, a: 2 } } })).toBe(
      callIdentity({ tool: 't', args: { x: { a: 2, b: 1 } } }),
    );
    expect(callIdentity({ tool: 't', args: { x: [1, 2] } })).not.toBe(
      callIdentity({ tool: 't', args: { x: [2, 1] } }),
    );
    expect(callIdentity({ tool: 't', args: {} })).not.toBe(callIdentity({ tool: 'u', args: {} }));
  });
});

describe('stuck label', () => {
  it('needs 3 consecutive identical calls with identical results', () => {
    expect(findStuckStreak(run([C, A, A]))).toBeNull();
    expect(findStuckStreak(run([C, A, A, A]))).toEqual({ onset: 1, end: 3 });
    expect(findStuckStreak(run([A, A, A, A, A, C]))).toEqual({ onset: 0, end: 4 });
    expect(findStuckStreak(run([A, A, B, A, A]))).toBeNull();
  });

  it('treats key order as irrelevant', () => {
    const x1: Spec = ['read', { a: 1, b: 2 }, 'same'];
    const x2: Spec = ['read', { b: 2, a: 1 }, 'same'];
    expect(findStuckStreak(run([x1, x2, x1]))).toEqual({ onset: 0, end: 2 });
  });

  it('does not call paging/polling (identical calls, different results) stuck', () => {
    const pages: Spec[] = Array.from(
      { length: 6 },
      (_, i) => ['next_page', { cursor: 'c' }, `page ${i}`] as const,
    );
    expect(findStuckStreak(run(pages))).toBeNull();
    // a result that changes once in the middle splits the streak
    const split: Spec[] = [A, A, ['search', { q: 'a' }, 'other'], A, A];
    expect(findStuckStreak(run(split))).toBeNull();
  });

  it('reports the first streak', () => {
    expect(findStuckStreak(run([B, B, B, C, A, A, A, A]))).toEqual({ onset: 0, end: 2 });
  });
});

describe('ping-pong label', () => {
  it('finds A,B,A,B with repeated results and extends while it continues', () => {
    expect(findPingPong(run([C, A, B, A, B]))).toEqual({ onset: 1, end: 4 });
    expect(findPingPong(run([A, B, A, B, A, B, C]))).toEqual({ onset: 0, end: 5 });
  });

  it('needs A != B and the same results on the repeat', () => {
    expect(findPingPong(run([A, A, A, A]))).toBeNull();
    expect(findPingPong(run([A, B, A, ['lookup', { k: 'b' }, 'changed']]))).toBeNull();
    expect(findPingPong(run([A, B, A]))).toBeNull();
  });
});

describe('countLabels', () => {
  it('counts runs, outcomes and successful stuck runs', () => {
    const counts = countLabels([
      run([A, A, A], true),
      run([A, B, A, B], false),
      run([A, A, A, B], false),
      run([C], null),
    ]);
    expect(counts).toEqual({
      runs: 4,
      calls: 12,
      stuck: 2,
      pingPong: 1,
      successful: 1,
      unsuccessful: 2,
      unknownOutcome: 1,
      successfulStuck: 1,
    });
  });
});
