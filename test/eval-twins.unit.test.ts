import { describe, expect, it } from 'vitest';
import {
  type Detector,
  evaluate,
  formatSummary,
  formatTable,
  identicalInARow,
  prefixKey,
  twinStops,
} from '../src/eval/index.js';
import type { TraceCall, TraceRun } from '../src/trace/trace-run.js';

/**
 * Twin stops: a stop on a failed run at a call where a successful run of the same source,
 * identical through that call, was stopped too. What such a stop saved came with a false stop.
 */
function call(step: number, tool: string, result: string): TraceCall {
  return {
    step,
    tool,
    args: { q: tool },
    result,
    result_sha256: `sha:${result}`,
    after_user_turn: step === 0,
  };
}

function run(
  id: string,
  success: boolean | null,
  calls: readonly [string, string][],
  taskType?: string,
): TraceRun {
  return {
    run_id: id,
    outcome: { success },
    calls: calls.map(([tool, result], i) => call(i, tool, result)),
    ...(taskType === undefined ? {} : { task_type: taskType }),
  };
}

/** The one-line rule: on these runs (one call repeated) it stops every run at its third call, whatever came back. */
const atThird = identicalInARow(3);
/** Stops only runs whose second result is "stuck": it looks at what came back. */
const looks: Detector = {
  name: 'looks',
  judge: (r) =>
    r.calls[1]?.result === 'stuck' ? { stopIndex: 2, rule: 'looked' } : { stopIndex: null, rule: null },
};

const poll: [string, string][] = [
  ['poll', '0%'],
  ['poll', '10%'],
  ['poll', '20%'],
  ['poll', 'done'],
];

describe('twin stops', () => {
  it('given a failed and a successful run identical through the stopped call, when both are stopped there, then the failed stop is a twin', () => {
    const failed = run('f', false, [...poll.slice(0, 2), ['poll', 'never done'], ['poll', 'never done']]);
    const succeeded = run('s', true, poll);
    // The third call's own result differs: the detector had not seen it when it refused the call.
    expect(prefixKey(failed, 2)).toBe(prefixKey(succeeded, 2));
    expect(prefixKey(failed, 3)).not.toBe(prefixKey(succeeded, 3));
    const stop = { stopIndex: 2, rule: 'x' };
    expect(twinStops([failed, succeeded], [stop, stop])).toEqual([true, false]);
  });

  it('given the successful run not stopped, or stopped at another call, then the failed stop is its own', () => {
    const failed = run('f', false, [...poll.slice(0, 2), ['poll', 'x'], ['poll', 'x']]);
    const succeeded = run('s', true, poll);
    const at2 = { stopIndex: 2, rule: 'x' };
    expect(twinStops([failed, succeeded], [at2, { stopIndex: null, rule: null }])).toEqual([false, false]);
    expect(twinStops([failed, succeeded], [at2, { stopIndex: 3, rule: 'x' }])).toEqual([false, false]);
  });

  it('given runs that differ before the stopped call (a result, an argument, the task type), then no twin', () => {
    const succeeded = run('s', true, poll);
    const stop = { stopIndex: 2, rule: 'x' };
    const otherResult = run('f', false, [poll[0] as [string, string], ['poll', '11%'], ['poll', 'x']]);
    const otherCall = run('f', false, [poll[0] as [string, string], ['peek', '10%'], ['poll', 'x']]);
    const otherType = run('f', false, poll, 'research');
    for (const failed of [otherResult, otherCall, otherType])
      expect(twinStops([failed, succeeded], [stop, stop])).toEqual([false, false]);
  });

  it('given a detector that stops alike what it cannot tell apart, when evaluated, then its saving by twin stops is counted and left out beside the raw figure', () => {
    const files = [
      {
        name: 'src',
        runs: [
          run('s1', true, poll),
          run('f1', false, [...poll.slice(0, 2), ['poll', 'stuck'], ['poll', 'stuck'], ['poll', 'stuck']]),
          run('f2', false, [
            poll[0] as [string, string],
            ['poll', 'stuck'],
            ['poll', 'stuck'],
            ['poll', 'stuck'],
          ]),
        ],
      },
    ];
    const report = evaluate(files, [looks, atThird]);
    const [ours, blind] = report.files[0]?.rows ?? [];
    // The blind rule stops all three at the third call: f1 looks like s1 so far, f2 does not.
    expect(blind).toMatchObject({
      falseStops: 1,
      callsSavedUnsuccessful: 3 + 2,
      twinStops: 1,
      callsSavedByTwinStops: 3,
    });
    expect(ours).toMatchObject({
      falseStops: 0,
      callsSavedUnsuccessful: 2,
      twinStops: 0,
      callsSavedByTwinStops: 0,
    });
    expect(formatTable(report)).toContain('5/9 (55.6%), 3 by twin stops');
    const summary = formatSummary(report, false, 'looks');
    const line = summary.split('\n').find((l) => l.startsWith('src')) ?? '';
    // Raw, the blind rule saves more (2 against 5: 0.40x); less its twin stops, as much (2 against 2).
    expect(line).toMatch(/ 2 \/ 2 \(1\.00x\) +0\.40x$/);
    expect(summary).toContain('twin stop: a stop on a failed run');
  });

  it('given twins in different sources, then neither counts: a source is judged on its own runs', () => {
    const files = [
      { name: 'a', runs: [run('s', true, poll)] },
      { name: 'b', runs: [run('f', false, [...poll.slice(0, 2), ['poll', 'x'], ['poll', 'x']])] },
    ];
    const rows = evaluate(files, [atThird]).files.map((f) => f.rows[0]);
    expect(rows.map((r) => r?.twinStops)).toEqual([0, 0]);
    expect(rows[1]?.callsSavedUnsuccessful).toBe(2);
  });
});
