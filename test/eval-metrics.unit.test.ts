import { describe, expect, it } from 'vitest';
import {
  computeMetrics,
  type Detector,
  evaluate,
  formatTable,
  type JudgedRun,
  nearestRank,
  percent,
  TOTALS_NAME,
  wastedCalls,
} from '../src/eval/index.js';
import type { TraceCall, TraceRun } from '../src/trace/trace-run.js';

function judged(
  calls: number,
  success: boolean | null,
  stopIndex: number | null,
  stuck: { onset: number; end: number } | null = null,
  rule: string | null = stopIndex === null ? null : 'r',
): JudgedRun {
  return {
    runId: `run-${calls}-${stopIndex}`,
    calls,
    success,
    labels: { stuck, pingPong: null },
    verdict: { stopIndex, rule },
  };
}

describe('nearest-rank percentiles', () => {
  it('returns data values by rank ceil(p/100*n)', () => {
    expect(nearestRank([], 50)).toBeNull();
    expect(nearestRank([7], 95)).toBe(7);
    expect(nearestRank([4, 1, 3, 2], 50)).toBe(2);
    expect(nearestRank([1, 2, 3, 4, 5], 50)).toBe(3);
    const twenty = Array.from({ length: 20 }, (_, i) => i + 1);
    expect(nearestRank(twenty, 95)).toBe(19);
    expect(nearestRank([...twenty, 21], 95)).toBe(20);
    expect(() => nearestRank([1], 0)).toThrow(RangeError);
  });

  it('rounds percentages to 0.1 and has none for an empty whole', () => {
    expect(percent(1, 3)).toBe(33.3);
    expect(percent(2, 3)).toBe(66.7);
    expect(percent(0, 0)).toBeNull();
  });
});

describe('computeMetrics', () => {
  it('scores caught/missed stuck runs, wasted calls, false stops and saved calls', () => {
    const m = computeMetrics('d', [
      judged(10, false, 3, { onset: 1, end: 6 }), // caught exactly after the 3rd identical call: wasted 0
      judged(10, false, 6, { onset: 1, end: 6 }), // caught on the last looping call: wasted 3
      judged(10, false, 7, { onset: 1, end: 6 }), // the loop already ended: missed
      judged(10, null, null, { onset: 0, end: 2 }), // missed
      judged(8, null, 0, { onset: 4, end: 6 }), // stopped before the loop began: caught, wasted 0
      judged(5, true, 2), // false stop
      judged(5, true, null),
      judged(4, false, null),
    ]);
    expect(m.runs).toBe(8);
    expect(m.calls).toBe(62);
    expect(m.stoppedRuns).toBe(5);
    expect(m.stuckRuns).toBe(5);
    expect(m.stuckCaught).toBe(3);
    expect(m.stuckCaughtPct).toBe(60);
    expect(m.stuckMissed).toBe(2);
    expect(m.stuckStoppedBeforeOnset).toBe(1);
    expect(m.wastedMedian).toBe(0);
    expect(m.wastedP95).toBe(3);
    expect(m.wastedMax).toBe(3);
    expect(m.successfulRuns).toBe(2);
    expect(m.falseStops).toBe(1);
    expect(m.falseStopsPct).toBe(50);
    expect(m.unsuccessfulRuns).toBe(4);
    expect(m.unsuccessfulCalls).toBe(34);
    expect(m.callsSavedUnsuccessful).toBe(7 + 4 + 3);
    expect(m.callsSavedUnsuccessfulPct).toBe(41.2);
    expect(m.unknownOutcomeRuns).toBe(2);
    expect(m.unknownOutcomeStops).toBe(1);
    expect(m.stopsByRule).toEqual({ r: 5 });
  });

  it('computes wasted calls relative to the third identical call', () => {
    expect(wastedCalls(3, 1)).toBe(0);
    expect(wastedCalls(1, 1)).toBe(0);
    expect(wastedCalls(9, 1)).toBe(6);
  });

  it('sorts rules and counts a null rule as (none)', () => {
    const m = computeMetrics('d', [
      judged(3, false, 1, null, 'z'),
      judged(3, false, 1, null, null),
      judged(3, false, 2, null, 'a'),
    ]);
    expect(Object.keys(m.stopsByRule)).toEqual(['(none)', 'a', 'z']);
  });

  it('given honest prefixes, counts the calls saved by stops inside them on failed runs; unknown when a failed run has none', () => {
    const withPrefix = (j: JudgedRun, honestPrefix: number): JudgedRun => ({ ...j, honestPrefix });
    const runs = [
      withPrefix(judged(10, false, 2), 4), // stopped inside honest work: 8 calls
      withPrefix(judged(10, false, 6), 4), // stopped in the loop: not counted
      withPrefix(judged(10, false, 4), 4), // stopped at the loop's first call: in the loop
      withPrefix(judged(9, false, null), 3), // not stopped
      withPrefix(judged(5, true, 1), 0), // a successful run: a false stop, not a saving
    ];
    const m = computeMetrics('d', runs);
    expect(m.callsSavedUnsuccessful).toBe(8 + 4 + 6);
    expect(m.callsSavedInHonestWork).toBe(8);
    expect(computeMetrics('d', [...runs, judged(4, false, null)]).callsSavedInHonestWork).toBeNull();
    expect(computeMetrics('d', [judged(10, false, 2)]).callsSavedInHonestWork).toBeNull();
  });
});

function call(step: number, tool: string, result: string): TraceCall {
  return { step, tool, args: {}, result, result_sha256: `sha:${result}`, after_user_turn: step === 0 };
}

function traceRun(id: string, success: boolean | null, tools: readonly string[]): TraceRun {
  return { run_id: id, outcome: { success }, calls: tools.map((tool, i) => call(i, tool, 'same')) };
}

const stopAtThird: Detector = {
  name: 'third',
  judge: (r) => (r.calls.length > 3 ? { stopIndex: 3, rule: 'third' } : { stopIndex: null, rule: null }),
};
const never: Detector = { name: 'never', judge: () => ({ stopIndex: null, rule: null }) };

describe('evaluate / formatTable', () => {
  const files = [
    {
      name: 'b.jsonl',
      runs: [traceRun('b/1', false, ['x', 'x', 'x', 'x', 'x']), traceRun('b/2', true, ['x', 'y'])],
    },
    { name: 'a.jsonl', runs: [traceRun('a/1', true, ['p', 'q', 'r', 's', 't'])] },
  ];

  it('keeps file and detector order, pools totals, and is JSON-able', () => {
    const report = evaluate(files, [stopAtThird, never]);
    expect(report.detectors).toEqual(['third', 'never']);
    expect(report.files.map((f) => f.name)).toEqual(['b.jsonl', 'a.jsonl']);
    const [b, a] = report.files;
    expect(b?.rows[0]).toMatchObject({
      stuckRuns: 1,
      stuckCaught: 1,
      wastedMedian: 1,
      callsSavedUnsuccessful: 2,
    });
    expect(a?.rows[0]).toMatchObject({ falseStops: 1, successfulRuns: 1 });
    expect(report.totals.name).toBe(TOTALS_NAME);
    expect(report.totals.labels).toMatchObject({ runs: 3, calls: 12, stuck: 1, successful: 2 });
    expect(report.totals.rows[0]).toMatchObject({
      runs: 3,
      stoppedRuns: 2,
      falseStops: 1,
      falseStopsPct: 50,
    });
    expect(report.totals.rows[1]).toMatchObject({ stoppedRuns: 0, stuckMissed: 1 });
    expect(JSON.parse(JSON.stringify(report))).toEqual(report);
    expect(evaluate(files, [stopAtThird, never])).toEqual(report);
  });

  it('rejects out-of-range stops and duplicate names', () => {
    const bad: Detector = { name: 'bad', judge: (r) => ({ stopIndex: r.calls.length, rule: 'x' }) };
    expect(() => evaluate(files, [bad])).toThrow(/stopIndex/);
    expect(() => evaluate(files, [never, never])).toThrow(/named "never"/);
  });

  it('prints one aligned table per file plus totals', () => {
    const text = formatTable(evaluate(files, [stopAtThird, never]));
    expect(text).toContain('== b.jsonl: 2 runs, 7 calls');
    expect(text).toContain(`== ${TOTALS_NAME}: 3 runs, 12 calls`);
    const lines = text.split('\n');
    const header = lines.find((l) => l.startsWith('detector')) ?? '';
    const row = lines.find((l) => l.startsWith('third')) ?? '';
    expect(row.indexOf('1/1 (100.0%)')).toBe(header.indexOf('stuck caught'));
  });
});

describe('false stops on clean runs', () => {
  it('separates successful runs that were stuck themselves from clean ones', () => {
    const m = computeMetrics('d', [
      judged(5, true, 3, { onset: 0, end: 3 }),
      judged(6, true, 2),
      judged(7, true, null),
    ]);
    expect(m.falseStops).toBe(2);
    expect(m.falseStopsOnCleanRuns).toBe(1);
    expect(m.falseStopRunIds).toEqual(['run-5-3', 'run-6-2']);
  });
});
