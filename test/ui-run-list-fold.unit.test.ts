/**
 * The ui's run list index folds each run into its row and drops an ended run's state: its rows are
 * the ones a full RunsProjection gives (waiting, stopped, resumed and stopped again, interleaved),
 * and what it keeps of 20,000 ended runs is their rows, no run state.
 */
import { describe, expect, it } from 'vitest';
import type { RecordedEvent } from '../src/domain/index.js';
import { RunsProjection } from '../src/projections/index.js';
import { RunListFold } from '../src/timeline/run-list-fold.js';
import { LIVE_STATES_KEPT, RunListIndex } from '../src/timeline/run-list-index.js';
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

  it('keeps at most maxLive states, taking up a dropped one from its own events: the same rows', () => {
    const runs = [
      run('waiting', upTo('RunWaiting')),
      run('waiting-then-executed', SAMPLE_RECORDS.length),
      run('resumed', SAMPLE_RECORDS.length, [stop]),
      run('started', 3),
      run('live-a', upTo('RunWaiting') - 1),
      run('live-b', upTo('RunStopped') - 1),
    ];
    const byRun = new Map(runs.map((r) => [r[0]?.runId as string, r]));
    const fold = new RunListFold(2);
    const full = new RunsProjection();
    let restored = 0;
    for (const r of interleave(runs)) {
      if (fold.evicted(r.runId)) {
        fold.restore(
          r.runId,
          (byRun.get(r.runId) ?? []).filter((e) => e.seq < r.seq),
        );
        restored++;
      }
      fold.apply(r);
      full.apply(r);
      expect(fold.liveRuns).toBeLessThanOrEqual(2);
    }
    expect(restored).toBeGreaterThan(0);
    expect(fold.rows()).toEqual(runListRows({ runs: full }));
  });

  it('refuses an event of a run whose state it dropped, rather than guess its status', () => {
    const fold = new RunListFold(1);
    for (const r of interleave([run('a', 2), run('b', 2)])) {
      if (fold.evicted(r.runId)) {
        expect(() => fold.apply(r)).toThrow(/state was dropped/);
        return;
      }
      fold.apply(r);
    }
    throw new Error('no run was evicted');
  });

  it("the ui's index over more live runs than it keeps states of: the rows of a full projection", async () => {
    const runs = Array.from({ length: LIVE_STATES_KEPT + 200 }, (_, i) =>
      run(`r${i}`, i % 3 === 0 ? upTo('RunWaiting') : SAMPLE_RECORDS.length - 1),
    );
    const log = interleave(runs);
    const byRun = new Map(runs.map((r) => [r[0]?.runId as string, r]));
    let reread = 0;
    const index = new RunListIndex({
      scan: () => Promise.reject(new Error('not scanned: read by offset')),
      entries: async function* (from: number) {
        for (let o = from; o < log.length; o++) yield { offset: o, event: log[o] as RecordedEvent };
      },
      runs: {
        page: () => Promise.reject(new Error('not paged here')),
        events: async (id) => {
          reread++;
          return byRun.get(id) ?? [];
        },
      },
    });
    const full = new RunsProjection();
    for (const r of log) full.apply(r);
    expect(await index.rows(new AbortController().signal)).toEqual(runListRows({ runs: full }));
    expect(reread).toBeGreaterThan(0);
  });
});
