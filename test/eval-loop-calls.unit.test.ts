import { describe, expect, it } from 'vitest';
import { evaluate, formatSummary, identicalInARow } from '../src/eval/index.js';
import type { TraceRun } from '../src/trace/trace-run.js';

/**
 * Loop calls: where a synthetic source knows how many calls of each failed run are honest work
 * before its loop, the calls after them are the most any detector saves on those runs without a
 * stop inside honest work. The per-source summary prints them, and what each rule's stops outside
 * honest work saved, beside the savings.
 */
function run(id: string, success: boolean | null, results: readonly string[]): TraceRun {
  return {
    run_id: id,
    source: 'test',
    outcome: { success },
    calls: results.map((result, step) => ({
      step,
      tool: 'poll',
      args: {},
      result,
      result_sha256: `sha:${result}`,
      after_user_turn: step === 0,
    })),
  };
}

const runs = [
  run('ok', true, ['0%', '50%', 'done']),
  run('stuck-a', false, ['0%', 'x', 'x', 'x', 'x']),
  run('stuck-b', false, ['x', 'x', 'x']),
  run('unknown', null, ['0%', '1%']),
];
const three = identicalInARow(3);

describe('loop calls', () => {
  it('given honest prefixes, when evaluated, then the calls after them are summed over the failed runs only, and in the totals', () => {
    const honestPrefixes = new Map([
      ['stuck-a', 1],
      ['stuck-b', 0],
    ]);
    const report = evaluate([{ name: 'synth', runs, honestPrefixes }], [three]);
    expect(report.files[0]?.loopCalls).toBe(4 + 3);
    expect(report.totals.loopCalls).toBe(7);
    const line =
      formatSummary(report, true, three.name)
        .split('\n')
        .find((l) => l.startsWith('synth ')) ?? '';
    // Saved on failed runs by the one-line rule (here in loopguard's place and its own): 3 of
    // stuck-a, stopped at its third call, inside its loop; 1 of stuck-b, stopped at its third call,
    // also in its loop (it has no honest prefix). Then the loop calls and those savings again.
    expect(line).toMatch(/ 4 \/ 4 \/ - +7; 4 \/ 4 \(1\.00x\) +/);
    expect(formatSummary(report, true, three.name)).toContain('outside honest work (synthetic sources');
  });

  it('given a source without prefixes, then its loop calls are unknown, and so are the totals of a mix', () => {
    const report = evaluate(
      [
        { name: 'recorded', runs },
        {
          name: 'synth',
          runs,
          honestPrefixes: new Map([
            ['stuck-a', 1],
            ['stuck-b', 0],
          ]),
        },
      ],
      [three],
    );
    expect(report.files.map((f) => f.loopCalls)).toEqual([null, 7]);
    expect(report.totals.loopCalls).toBeNull();
    const line =
      formatSummary(report, false, three.name)
        .split('\n')
        .find((l) => l.startsWith('recorded')) ?? '';
    expect(line).toMatch(/ 4 \/ 4 \/ - +- +4 \/ 4 /);
    // Recordings alone: no column for what none of them knows.
    const recorded = formatSummary(evaluate([{ name: 'recorded', runs }], [three]), false, three.name);
    expect(recorded).not.toContain('outside honest work');
    expect(recorded.split('\n').find((l) => l.startsWith('recorded'))).toMatch(/ 4 \/ 4 \/ - +4 \/ 4 /);
  });

  it("given a stop inside a failed run's honest prefix, then its saving is left out of the saving outside honest work", () => {
    // stuck-a's first three calls are honest work: the one-line rule's stop at its third call is inside it.
    const report = evaluate(
      [
        {
          name: 'synth',
          runs,
          honestPrefixes: new Map([
            ['stuck-a', 3],
            ['stuck-b', 0],
          ]),
        },
      ],
      [three],
    );
    expect(report.files[0]?.loopCalls).toBe(2 + 3);
    expect(report.files[0]?.rows[0]?.callsSavedInHonestWork).toBe(3);
    const line =
      formatSummary(report, true, three.name)
        .split('\n')
        .find((l) => l.startsWith('synth ')) ?? '';
    expect(line).toMatch(/ 5; 1 \/ 1 \(1\.00x\) +/);
  });

  it('given a failed run missing from the prefixes, then the evaluation refuses the source, naming the run', () => {
    expect(() =>
      evaluate([{ name: 'synth', runs, honestPrefixes: new Map([['stuck-a', 1]]) }], [three]),
    ).toThrow(/synth: no honest prefix for failed run stuck-b/);
  });
});
