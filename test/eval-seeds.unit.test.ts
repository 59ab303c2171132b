import { describe, expect, it } from 'vitest';
import { evalCommand } from '../src/cli/eval-command.js';
import type { Io } from '../src/cli/io.js';
import { parseSeedList } from '../src/cli/seed-list.js';
import { NO_STOP, stopAt } from '../src/eval/detector.js';
import {
  type Detector,
  type EvalFile,
  evaluateSeeds,
  familySpread,
  judgeFile,
  poolFiles,
  spread,
} from '../src/eval/index.js';
import type { TraceRun } from '../src/trace/trace-run.js';

/**
 * The synthetic families over several seeds: the spread across seeds (median, min, max), pooled
 * totals recomputed over the pooled runs, on how many seeds each target held, and the same output
 * for the same seed list every time.
 */

/** A run of `n` calls; identical calls and results (a stuck streak from call 0) unless `varied`. */
function run(id: string, success: boolean, n: number, varied = false): TraceRun {
  return {
    run_id: id,
    source: 'test',
    outcome: { success },
    calls: Array.from({ length: n }, (_, step) => ({
      step,
      tool: 'poll',
      args: varied ? { page: step } : {},
      result: varied ? `page ${step}` : 'same',
      result_sha256: varied ? `sha:${step}` : 'sha:same',
      after_user_turn: step === 0,
    })),
  };
}

/** A fixture detector: stops each run named in `at` at the index given there, no other. */
const stopping = (name: string, at: Readonly<Record<string, number>>): Detector => ({
  name,
  judge: (r) => (at[r.run_id] === undefined ? NO_STOP : stopAt(r, at[r.run_id] ?? 0, 'fixture')),
});

const OURS = 'loopguard';
const THREE = '3 identical in a row';

describe('spread across seeds', () => {
  it('given an odd count, when spread, then the median is the middle value, with the min and max', () => {
    expect(spread([1.5, 0.8, 1.2])).toEqual({ median: 1.2, min: 0.8, max: 1.5 });
  });

  it('given an even count, the median is the mean of the two middle values; Infinity sorts last; none gives null', () => {
    expect(spread([4, 1, 2, 3])).toEqual({ median: 2.5, min: 1, max: 4 });
    expect(spread([Number.POSITIVE_INFINITY, 1, 2])).toEqual({
      median: 2,
      min: 1,
      max: Number.POSITIVE_INFINITY,
    });
    expect(spread([])).toBeNull();
  });
});

describe('pooling judged sources', () => {
  // Source a: three stuck failed runs of 10 calls, wasted 0, 0, 5 by ours (median 0); source b: two,
  // wasted 5 and 5 (median 5); pooled the wasted calls are 0, 0, 5, 5, 5: median 5, not a median of medians.
  const a: EvalFile = {
    name: 'a',
    runs: [run('a1', false, 10), run('a2', false, 10), run('a3', false, 10), run('ok', true, 4, true)],
  };
  const b: EvalFile = {
    name: 'b',
    runs: [run('b1', false, 10), run('b2', false, 10), run('ok', true, 4, true)],
  };
  const ours = stopping(OURS, { a1: 2, a2: 2, a3: 7, b1: 7, b2: 7, ok: 3 });
  const three = stopping(THREE, { a1: 2, a2: 2, a3: 2, b1: 2, b2: 2, ok: 2 });

  it('given two sources, when pooled, then counts are summed and medians recomputed over the pooled runs', () => {
    const ja = judgeFile(a, [ours, three]);
    const jb = judgeFile(b, [ours, three]);
    expect(ja.report.rows[0]?.wastedMedian).toBe(0);
    expect(jb.report.rows[0]?.wastedMedian).toBe(5);
    const pooled = poolFiles('both', [OURS, THREE], [ja, jb]).report;
    expect(pooled.labels).toMatchObject({ runs: 7, calls: 58, stuck: 5, successful: 2, unsuccessful: 5 });
    const [lg, th] = pooled.rows;
    expect(lg?.wastedMedian).toBe(5);
    expect(lg?.stuckCaught).toBe(5);
    expect(lg?.falseStops).toBe(2);
    // Saved on failed runs: ours 8 + 8 + 3 + 3 + 3, the 3-identical rule 8 on each of the five.
    expect(lg?.callsSavedUnsuccessful).toBe(25);
    expect(th?.callsSavedUnsuccessful).toBe(40);
    expect(pooled.loopCalls).toBeNull();
  });

  it('given the same source on two seeds, when evaluated over both, then false stops are named with their seed', () => {
    const report = evaluateSeeds([7, 3], () => [b], [ours, three]);
    expect(report.seeds).toEqual([7, 3]);
    expect(report.pooled.files[0]?.rows[0]?.falseStopRunIds).toEqual(['seed 3: ok', 'seed 7: ok']);
    expect(report.pooled.files[0]?.labels.runs).toBe(6);
    expect(report.spreads.map((s) => s.name)).toEqual(['b', 'all files']);
    expect(() => evaluateSeeds([7, 7], () => [b], [ours, three])).toThrow('seed 7 is given twice');
    expect(() => evaluateSeeds([1, 2], (seed) => (seed === 1 ? [a, b] : [b, a]), [ours, three])).toThrow(
      'seed 2 gives the families b, a, not a, b',
    );
  });
});

describe('a family spread across seeds', () => {
  // Per seed, one failed stuck run of 10 calls and one successful one; the 3-identical rule stops both
  // at call 2 (saves 8, one false stop), ours stops the failed run at `stop` (saves 10 - stop) and the
  // successful one when `falseStop`.
  const seedReport = (stop: number, falseStop: boolean) =>
    judgeFile({ name: 'f', runs: [run('stuck', false, 10), run('ok', true, 4, true)] }, [
      stopping(OURS, { stuck: stop, ...(falseStop ? { ok: 3 } : {}) }),
      stopping(THREE, { stuck: 2, ok: 2 }),
    ]).report;

  it('given three seeds, then the ratio to the 3-identical rule is spread and each target counted per seed', () => {
    // Ours saves 8, 10, 2: 1.00x, 1.25x, 0.25x of the 3-identical rule's 8.
    const f = familySpread('f', [seedReport(2, false), seedReport(0, true), seedReport(8, false)], OURS);
    expect(f.savedVsThree).toEqual({ median: 1, min: 0.25, max: 1.25 });
    // No honest prefixes known: no figure outside honest work.
    expect(f.outsideHonestWorkVsThree).toBeNull();
    // The third seed stops the stuck run at call 8: caught, 6 calls wasted.
    expect(f.held).toEqual({
      seeds: 3,
      allCaught: 3,
      wastedMedianZero: 2,
      falseStopsAtMostThree: 3,
      savedAtTarget: 1,
    });
  });
});

describe('seed lists', () => {
  it('given seeds and ranges, then they are read in the order given; repeats, backward ranges and non-seeds are refused', () => {
    expect(parseSeedList('11,3-5, 20')).toEqual([11, 3, 4, 5, 20]);
    expect(() => parseSeedList('1-3,2')).toThrow('seed 2 is given twice');
    expect(() => parseSeedList('5-3')).toThrow('the range 5-3 runs backwards');
    expect(() => parseSeedList('1.5')).toThrow('"1.5" is not a seed');
    expect(() => parseSeedList('')).toThrow('is not a seed');
    expect(() => parseSeedList('4294967296')).toThrow('is over 4294967295');
    expect(() => parseSeedList('0-1000')).toThrow('more than 1000 seeds');
  });
});

describe('eval --synthetic --seeds', () => {
  const capture = (): { io: Io; text: () => string } => {
    const out: string[] = [];
    return {
      io: {
        out: (t) => out.push(t),
        err: (t) => out.push(`ERR ${t}`),
        status: () => undefined,
        isTty: false,
      },
      text: () => out.join(''),
    };
  };

  // Two seeds of every synthetic family, twice in this process: a few seconds, more on a loaded machine.
  it('given a seed list, when the synthetic families are scored twice, then the output is the same', () => {
    const first = capture();
    const second = capture();
    expect(evalCommand([], { synthetic: true, seeds: '3,7' }, first.io)).toBe(0);
    expect(evalCommand([], { synthetic: true, seeds: '3,7' }, second.io)).toBe(0);
    expect(second.text()).toBe(first.text());
    expect(first.text()).toContain('every family drawn from seeds 3, 7');
    expect(first.text()).toContain('== synthetic-assistant: 200 runs');
    expect(first.text()).toMatch(/^synthetic-shell-only \(synthetic\) +2 +\d/m);
  }, 120_000);

  it('given --seeds without --synthetic, then it is a usage error', () => {
    expect(() => evalCommand(['x.jsonl'], { seeds: '1' }, capture().io)).toThrow('give --synthetic too');
  });
});
