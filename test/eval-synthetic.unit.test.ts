import { describe, expect, it } from 'vitest';
import { cachedDiceSimilarity, DEFAULT_POLICY } from '../src/domain/index.js';
import { defaultBaselines, evaluate, labelRun, loopguardDetector } from '../src/eval/index.js';
import { syntheticCodingFiles, syntheticCodingRuns } from '../src/eval/synthetic/coding-runs.js';
import { nodeHashing } from '../src/runtime/node-hashing.js';

/**
 * The synthetic coding-agent runs: the shapes behind false stops on agents loopguard was never tuned
 * on (wrapped empty edits, edit/test flip-flops, similar scratch scripts, 30 to 150 call runs),
 * through three harnesses that word the same behaviour differently, and stuck runs after honest work.
 */
const runs = syntheticCodingRuns();
const loopguard = loopguardDetector(DEFAULT_POLICY, {
  hashing: nodeHashing('t'),
  similarity: cachedDiceSimilarity(),
});

describe('the synthetic coding-agent run set', () => {
  it('is the same for the same seed and differs for another', () => {
    expect(JSON.stringify(syntheticCodingRuns())).toBe(JSON.stringify(runs));
    expect(JSON.stringify(syntheticCodingRuns(12))).not.toBe(JSON.stringify(runs));
  });

  it('labels honestly: working runs hold no stuck streak, every stuck run does', () => {
    for (const run of runs) {
      const stuck = labelRun(run).stuck;
      if (run.outcome.success) expect(stuck, run.run_id).toBeNull();
      else expect(stuck, run.run_id).not.toBeNull();
    }
    const lengths = runs.filter((r) => r.run_id.includes('/long-run/')).map((r) => r.calls.length);
    expect(Math.min(...lengths)).toBeGreaterThanOrEqual(30);
    expect(Math.max(...lengths)).toBeGreaterThan(100);
  });

  it('loopguard under the default policy: no working run stopped, every stuck run caught with 0 wasted', () => {
    const stoppedWorking = runs
      .filter((r) => r.outcome.success)
      .filter((r) => loopguard.judge(r).stopIndex !== null)
      .map((r) => `${r.run_id}: ${loopguard.judge(r).rule}`);
    expect(stoppedWorking).toEqual([]);
    const totals = evaluate(syntheticCodingFiles(), [loopguard]).totals.rows[0];
    expect(totals?.stuckCaught).toBe(totals?.stuckRuns);
    expect(totals?.wastedMedian).toBe(0);
    expect(totals?.wastedMax).toBe(0);
  });

  it('loopguard saves more calls on the stuck runs than the 3-identical rule, without its false stops', () => {
    const report = evaluate(syntheticCodingFiles(), [loopguard, ...defaultBaselines()]).totals.rows;
    const ours = report.find((r) => r.detector === 'loopguard');
    const roo = report.find((r) => r.detector.startsWith('roo-code'));
    expect(ours?.callsSavedUnsuccessful).toBeGreaterThan(roo?.callsSavedUnsuccessful ?? 0);
    expect(ours?.falseStops).toBeLessThan(roo?.falseStops ?? 0);
  });
});
