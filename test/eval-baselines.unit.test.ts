import { describe, expect, it } from 'vitest';
import {
  crewaiMaxIter,
  defaultBaselines,
  geminiCliToolLoop,
  identicalInARow,
  looksLikeErrorResult,
  openaiAgentsMaxTurns,
  openhandsStuck,
  rooCodeToolRepetition,
  vercelAiStepCount,
} from '../src/eval/index.js';
import type { TraceCall, TraceRun } from '../src/trace/trace-run.js';

type Spec = readonly [tool: string, args: Record<string, unknown>, result: string, afterUser?: boolean];

function run(specs: readonly Spec[], success: boolean | null = false): TraceRun {
  const calls: TraceCall[] = specs.map(([tool, args, result, afterUser], step) => ({
    step,
    tool,
    args,
    result,
    result_sha256: `sha:${result}`,
    after_user_turn: step === 0 || afterUser === true,
  }));
  return { run_id: 'fixture/1', outcome: { success }, calls };
}

const same = (n: number, result = 'same'): Spec[] =>
  Array.from({ length: n }, () => ['search', { q: 'x' }, result] as const);
const distinct = (n: number): Spec[] =>
  Array.from({ length: n }, (_, i) => ['search', { q: `x${i}` }, `r${i}`] as const);

describe('step caps', () => {
  it.each([
    [openaiAgentsMaxTurns(), 10, 'max_turns'],
    [vercelAiStepCount(), 20, 'step_count'],
    [crewaiMaxIter(), 25, 'max_iter'],
  ] as const)('%s lets N calls run and stops at index N', (detector, n, rule) => {
    expect(detector.judge(run(distinct(n)))).toEqual({ stopIndex: null, rule: null });
    expect(detector.judge(run(distinct(n + 1)))).toEqual({ stopIndex: n, rule });
    expect(detector.judge(run(distinct(n + 7))).stopIndex).toBe(n);
  });

  it('restarts the budget after a user turn', () => {
    const specs: Spec[] = [...distinct(8), ['lookup', { id: 1 }, 'a', true], ...distinct(9)];
    expect(openaiAgentsMaxTurns().judge(run(specs)).stopIndex).toBeNull();
    expect(openaiAgentsMaxTurns(8).judge(run(specs)).stopIndex).toBe(16);
  });
});

describe('roo-code ToolRepetitionDetector (limit 3)', () => {
  const roo = rooCodeToolRepetition();

  it('lets three identical consecutive calls run and blocks the fourth', () => {
    expect(roo.judge(run(same(3))).stopIndex).toBeNull();
    expect(roo.judge(run([...distinct(2), ...same(4)]))).toEqual({ stopIndex: 5, rule: 'tool_repetition' });
  });

  it('ignores results and top-level key order, but resets on any different call', () => {
    const specs: Spec[] = [
      ['read', { a: 1, b: 2 }, 'r1'],
      ['read', { b: 2, a: 1 }, 'r2'],
      ['read', { a: 1, b: 2 }, 'r3'],
      ['other', {}, 'o'],
      ['read', { a: 1, b: 2 }, 'r4'],
      ['read', { a: 1, b: 2 }, 'r5'],
      ['read', { a: 1, b: 2 }, 'r6'],
      ['read', { b: 2, a: 1 }, 'r7'],
    ];
    expect(roo.judge(run(specs)).stopIndex).toBe(7);
    expect(roo.judge(run(specs.slice(0, 7))).stopIndex).toBeNull();
  });

  it('exempts browser scrolling and breaks streaks at user turns', () => {
    const scroll: Spec = ['browser_action', { action: 'scroll_down' }, 'page'];
    expect(roo.judge(run([scroll, scroll, scroll, scroll, scroll])).stopIndex).toBeNull();
    const split: Spec[] = [...same(3), ['search', { q: 'x' }, 'same', true], ...same(2)];
    expect(roo.judge(run(split)).stopIndex).toBeNull();
  });
});

describe('gemini-cli LoopDetectionService (threshold 5)', () => {
  const gemini = geminiCliToolLoop();

  it('lets four identical consecutive calls run and halts on the fifth', () => {
    expect(gemini.judge(run(same(4))).stopIndex).toBeNull();
    expect(gemini.judge(run([...distinct(1), ...same(6)]))).toEqual({ stopIndex: 5, rule: 'tool_call_loop' });
  });

  it('keys on args as written (key order matters) and ignores results', () => {
    const varied: Spec[] = Array.from({ length: 5 }, (_, i) => ['poll', { id: 1 }, `status ${i}`] as const);
    expect(gemini.judge(run(varied)).stopIndex).toBe(4);
    const reordered: Spec[] = [
      ['read', { a: 1, b: 2 }, 'r'],
      ['read', { a: 1, b: 2 }, 'r'],
      ['read', { b: 2, a: 1 }, 'r'],
      ['read', { a: 1, b: 2 }, 'r'],
      ['read', { a: 1, b: 2 }, 'r'],
    ];
    expect(gemini.judge(run(reordered)).stopIndex).toBeNull();
  });
});

describe('openhands StuckDetector', () => {
  const oh = openhandsStuck();

  it('stops after 4 identical action/observation pairs, at the call after the fourth', () => {
    expect(oh.judge(run(same(4))).stopIndex).toBeNull(); // fires after the last call: nothing to stop
    expect(oh.judge(run(same(5)))).toEqual({ stopIndex: 4, rule: 'repeating_action_observation' });
    expect(oh.judge(run([...same(3), ['finish', { a: 1 }, 'done']])).stopIndex).toBeNull();
  });

  it('does not count identical actions whose observations differ', () => {
    const paging: Spec[] = Array.from({ length: 8 }, (_, i) => ['next_page', {}, `page ${i}`] as const);
    expect(oh.judge(run(paging)).stopIndex).toBeNull();
  });

  it('stops after 3 identical actions with error observations (texts may differ)', () => {
    const errs: Spec[] = [
      ['pay', { amount: 5 }, 'Error: payment amount does not add up, total 7'],
      ['pay', { amount: 5 }, 'Error: payment amount does not add up, total 8'],
      ['pay', { amount: 5 }, 'Error: payment amount does not add up, total 9'],
      ['pay', { amount: 5 }, 'Error: again'],
    ];
    expect(oh.judge(run(errs))).toEqual({ stopIndex: 3, rule: 'repeating_action_error' });
    expect(oh.judge(run(errs.slice(0, 3))).stopIndex).toBeNull();
  });

  it('stops after an A/B pattern over six steps', () => {
    const a: Spec = ['search', { q: 'a' }, 'ra'];
    const b: Spec = ['lookup', { k: 'b' }, 'rb'];
    expect(oh.judge(run([a, b, a, b, a, b, a]))).toEqual({
      stopIndex: 6,
      rule: 'repeating_action_observation_pattern',
    });
    expect(oh.judge(run([a, b, a, b, a, ['lookup', { k: 'b' }, 'changed'], a])).stopIndex).toBeNull();
  });

  it('does not let a window span a user turn', () => {
    const specs: Spec[] = [...same(2), ['search', { q: 'x' }, 'same', true], ...same(3)];
    expect(oh.judge(run(specs)).stopIndex).toBeNull();
  });
});

describe('looksLikeErrorResult', () => {
  it.each([
    ['Error: gift card balance is not enough', true],
    ['{"error": "Timeout error...HTTPConnectionPool", "response": ""}', true],
    ["('click', 'x') generated an exception: Unknown tool name", true],
    ['Traceback (most recent call last):\n  File "x.py"', true],
    ['ValueError: bad input', true],
    ['{"error": "", "response": "{\\"data\\": 1}"}', false],
    ['{"error": "', false],
    ['Fatal Vision is a 1983 true crime book', false],
    ['Could not find [x]. Similar: []', false],
    ['', false],
  ])('%j -> %s', (text, expected) => {
    expect(looksLikeErrorResult(text)).toBe(expected);
  });
});

describe('defaultBaselines', () => {
  it('has eight uniquely named detectors, the one-line rules first, that leave a short, varied run alone', () => {
    const detectors = defaultBaselines();
    expect(new Set(detectors.map((d) => d.name)).size).toBe(8);
    expect(detectors.slice(0, 2).map((d) => d.name)).toEqual([
      '3 identical in a row',
      '5 identical in a row',
    ]);
    for (const detector of detectors) expect(detector.judge(run(distinct(5))).stopIndex).toBeNull();
  });
});

describe('N identical in a row (the one-line rule)', () => {
  const three = identicalInARow(3);

  it('refuses the third identical call in a row, whatever the results', () => {
    expect(three.judge(run(same(2))).stopIndex).toBeNull();
    expect(three.judge(run([...distinct(2), ...same(3)]))).toEqual({
      stopIndex: 4,
      rule: 'identical_in_a_row',
    });
    const paging: Spec[] = Array.from({ length: 4 }, (_, i) => ['next_page', {}, `page ${i}`] as const);
    expect(three.judge(run(paging)).stopIndex).toBe(2);
  });

  it('compares arguments with keys sorted at every depth, and a user turn breaks the row', () => {
    const specs: Spec[] = [
      ['f', { a: { x: 1, y: 2 }, b: 1 }, 'r'],
      ['f', { b: 1, a: { y: 2, x: 1 } }, 'r'],
      ['f', { a: { x: 1, y: 2 }, b: 1 }, 'r', true],
      ['f', { a: { x: 1, y: 2 }, b: 1 }, 'r'],
    ];
    expect(three.judge(run(specs)).stopIndex).toBeNull();
    expect(
      three.judge(run(specs.slice(0, 2).concat([['f', { b: 1, a: { x: 1, y: 2 } }, 'r']]))).stopIndex,
    ).toBe(2);
  });

  it('the patient variant refuses the fifth', () => {
    expect(identicalInARow(5).judge(run(same(6))).stopIndex).toBe(4);
    expect(() => identicalInARow(1)).toThrow(RangeError);
  });
});
