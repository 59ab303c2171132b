/**
 * The ui's run list index folds each run into its row and drops an ended run's state: its rows are
 * the ones a full RunsProjection gives (waiting, stopped, resumed and stopped again, interleaved),
 * and what it keeps of 20,000 ended runs is their rows, no run state.
 */
import { describe, expect, it } from 'vitest';
import type { RecordedEvent } from '../src/domain/index.js';
import { RunsProjection } from '../src/projections/index.js';
import { RunListFold } from '../src/timeline/run-list-fold.js';
import { runListRows } from '../src/timeline/run-list-page.js';
import { SAMPLE_RECORDS } from './log-sample-events.js';

const upTo = (type: string) => SAMPLE_RECORDS.findIndex((r) => r.event.type === type) + 1;

/** Run `runId` as the sample records, cut after `n` of them, then `more` (renumbered). */
function run(runId: string, n: number, more: readonly RecordedEvent[] = []): RecordedEvent[] {
  return [...SAMPLE_RECORDS.slice(0, n), ...more].map((r, i) => ({
    ...r,
    runId,
    eventId: `${runId}/${i + 1}`,
    seq: i + 1,
    event: r.event.type === 'RunStarted' ? { ...r.event, runId, tenant: `t-${runId}` } : r.event,
  }));
}

/** Round-robin over the runs' events, as partitions of a log interleave them. */
function interleave(runs: readonly RecordedEvent[][]): RecordedEvent[] {
  const out: RecordedEvent[] = [];
  for (let i = 0; runs.some((r) => i < r.length); i++)
    for (const r of runs) if (i < r.length) out.push(r[i] as RecordedEvent);
  return out;
}

const stop = SAMPLE_RECORDS[upTo('RunStopped') - 1] as RecordedEvent;

describe("the ui's run list fold", () => {
  it('gives the rows of a full projection', () => {
    const log = interleave([
      run('waiting', upTo('RunWaiting')),
      run('stopped', upTo('RunStopped')),
      run('resumed', SAMPLE_RECORDS.length),
      run('stopped-twice', SAMPLE_RECORDS.length, [stop]),
      run('started', 1),
    ]);
    const fold = new RunListFold();
    const full = new RunsProjection();
    for (const r of log) {
      fold.apply(r);
      full.apply(r);
    }
    const rows = fold.rows();
    expect(rows).toEqual(runListRows({ runs: full }));
    expect(rows.map((r) => [r.runId, r.state])).toEqual([
      ['waiting', 'WAITING'],
      ['stopped', stop.event.type === 'RunStopped' ? stop.event.report.terminalState : '?'],
      ['resumed', 'RUNNING'],
      ['stopped-twice', stop.event.type === 'RunStopped' ? stop.event.report.terminalState : '?'],
      ['started', 'RUNNING'],
    ]);
    // Only the live runs keep a state.
    expect(fold.liveRuns).toBe(3);
  });

  it('keeps rows, not states, of 20,000 ended runs', () => {
    const fold = new RunListFold();
    for (let i = 0; i < 20_000; i++) for (const r of run(`r${i}`, upTo('RunStopped'))) fold.apply(r);
    expect(fold.rows()).toHaveLength(20_000);
    expect(fold.liveRuns).toBe(0);
  });
});
