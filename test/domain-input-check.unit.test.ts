/** The one boundary check: each kind of value, its range, and the names of object internals. */
import { describe, expect, it } from 'vitest';
import {
  CALL_FIELDS,
  fieldsProblem,
  MAX_NAME_CHARS,
  MAX_TIMER_MS,
  MAX_TOKENS,
  nameProblem,
  OUTCOME_FIELDS,
  own,
  parsePolicy,
  put,
  textProblem,
  timeProblem,
  tokensProblem,
} from '../src/domain/index.js';

describe('names', () => {
  it.each([
    ['', 'expected a non-empty string'],
    ['  \t', 'expected a non-empty string'],
    [undefined, 'missing'],
    [42, 'expected a non-empty string, got 42'],
    ['x'.repeat(MAX_NAME_CHARS + 1), 'longer than'],
    ['run-\uD800', 'not valid Unicode'],
    ['run-\uDC00-x', 'not valid Unicode'],
  ])('%j is refused: %s', (v, problem) => {
    expect(nameProblem(v)).toContain(problem);
  });

  it.each(['a', 'constructor', '__proto__', 'run/with/slashes', 'emoji 😀 run'])('%j is a name', (v) => {
    expect(nameProblem(v)).toBeNull();
  });

  it('free text may be blank but not ill-formed', () => {
    expect(textProblem('')).toBeNull();
    expect(textProblem('\uDFFF')).toContain('not valid Unicode');
  });
});

describe('numbers the encoder and the runtime honour', () => {
  it.each([1.5, -1, 1e308, Number.NaN, Number.POSITIVE_INFINITY, MAX_TOKENS + 1, '5'])(
    'tokens %j is refused',
    (v) => {
      expect(tokensProblem(v)).toMatch(/^expected an integer in \[0, \d+\]/);
    },
  );

  it('times stop at the last JS Date; delays at the timer limit', () => {
    expect(timeProblem(8_640_000_000_000_000)).toBeNull();
    expect(timeProblem(1e20)).not.toBeNull();
    expect(fieldsProblem({ retryAfterMs: MAX_TIMER_MS }, OUTCOME_FIELDS, 'result')).toBeNull();
    expect(fieldsProblem({ retryAfterMs: MAX_TIMER_MS + 1 }, OUTCOME_FIELDS, 'result')).toEqual({
      path: 'result.retryAfterMs',
      problem: `expected an integer in [0, ${MAX_TIMER_MS}], got ${MAX_TIMER_MS + 1}`,
    });
  });

  it('absent fields are fine; present ones are checked, and named by path', () => {
    expect(fieldsProblem({}, CALL_FIELDS, 'req')).toBeNull();
    expect(fieldsProblem({ progressVersion: 1.5 }, CALL_FIELDS, 'req')?.path).toBe('req.progressVersion');
  });
});

describe('names that are also object internals', () => {
  it('own() never answers with what every object inherits', () => {
    const rec: Record<string, number> = {};
    for (const k of ['constructor', '__proto__', 'toString', 'hasOwnProperty'])
      expect(own(rec, k)).toBeUndefined();
  });

  it('put() keeps "__proto__" as data', () => {
    const rec: Record<string, number> = {};
    put(rec, '__proto__', 1);
    expect(Object.getPrototypeOf(rec)).toBe(Object.prototype);
    expect(own(rec, '__proto__')).toBe(1);
    expect(JSON.stringify(rec)).toBe('{"__proto__":1}');
  });

  it('a policy for tools.__proto__ and taskTypes.constructor is kept, and stepTimeoutMs fits a timer', () => {
    const parsed = parsePolicy(
      JSON.parse('{"tools":{"__proto__":{"maxCalls":1}},"taskTypes":{"constructor":{"maxSteps":2}}}'),
    );
    if (!parsed.ok) throw parsed.error;
    expect(own(parsed.value.tools, '__proto__')?.maxCalls).toBe(1);
    expect(own(parsed.value.taskTypes, 'constructor')?.maxSteps).toBe(2);
    const tooLong = parsePolicy({ stepTimeoutMs: MAX_TIMER_MS + 1 });
    expect(tooLong.ok ? null : tooLong.error.message).toContain(
      `stepTimeoutMs: must be at most ${MAX_TIMER_MS}`,
    );
  });
});
