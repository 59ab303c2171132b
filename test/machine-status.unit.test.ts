/**
 * The run machine is the one place a run's status changes: `evolve` folds a run's data and never
 * its status nor its wait, and every reader's status (projections, a run's timeline, the run list,
 * the decider's look-ahead) is the machine's, because each folds through `foldRun`.
 */

import { describe, expect, it } from 'vitest';
import { evolve, initialState, type RecordedEvent, type RunState } from '../src/domain/index.js';
import { type CommandInput, foldRun, RunActor } from '../src/machines/index.js';
import { Projections, RunTimelineFold } from '../src/projections/index.js';
import { RunListFold } from '../src/timeline/run-list-fold.js';
import { deps, FakeClock, policy } from './support/given.js';

/** A run's durable log, made by an actor from commands, and the actor's clock. */
function recorded(...cmds: CommandInput[]): { log: RecordedEvent[]; clock: FakeClock; actor: RunActor } {
  const clock = new FakeClock(0);
  const actor = new RunActor('run-1', deps, clock);
  const log: RecordedEvent[] = [];
  for (const c of cmds) {
    const r = actor.propose(c);
    if (!r.ok) throw r.error;
    log.push(...r.value);
    actor.commit(r.value);
    clock.advance(10);
  }
  return { log, clock, actor };
}

/** The lifecycle's fields: what only the machine may write. */
const lifecycle = (s: RunState) => ({
  status: s.status,
  waitUntilMs: s.waitUntilMs,
  waitCallFingerprint: s.waitCallFingerprint,
});

/** A run that starts, waits after a RETRYABLE, runs its retry, is stopped, then resumed. */
const aWholeLifecycle = (): RecordedEvent[] =>
  recorded(
    { type: 'StartRun', runId: 'run-1', policy: policy() },
    { type: 'RequestToolCall', callId: 'c1', tool: 'api', args: { q: 1 } },
    { type: 'CompleteToolCall', callId: 'c1', kind: 'RETRYABLE', resultHash: 'e', retryAfterMs: 5 },
    { type: 'RequestToolCall', callId: 'c2', tool: 'api', args: { q: 1 } },
    { type: 'CompleteToolCall', callId: 'c2', kind: 'SUCCESS', resultHash: 'ok' },
    { type: 'Cancel', reason: 'enough' },
    { type: 'Resume', preconditionChange: 'more budget', approvedBy: 'ops' },
  ).log;

describe('evolve folds data, never the lifecycle', () => {
  it('every event of a whole lifecycle, each folded onto the live state before it, leaves status and wait as they were', () => {
    const log = aWholeLifecycle();
    expect(log.map((r) => r.event.type)).toEqual(
      expect.arrayContaining(['RunStarted', 'RunWaiting', 'RunStopped', 'RunResumed']),
    );
    let live = initialState('run-1');
    const moved: string[] = [];
    for (const r of log) {
      expect(lifecycle(evolve(live, r))).toEqual(lifecycle(live));
      const next = foldRun(live, r);
      if (next.status !== live.status) moved.push(`${live.status}->${next.status}`);
      live = next;
    }
    // The same events through the machine move the run through its whole lifecycle.
    expect(moved).toEqual([
      'NEW->RUNNING',
      'RUNNING->WAITING',
      'WAITING->RUNNING',
      'RUNNING->PARTIAL',
      'PARTIAL->RUNNING',
    ]);
  });

  it('over a RunStopped, evolve records the report and leaves the status RUNNING; the machine ends the run', () => {
    const { log } = recorded(
      { type: 'StartRun', runId: 'run-1', policy: policy() },
      { type: 'Finish', verified: true },
    );
    const [started, stopped] = log as [RecordedEvent, RecordedEvent];
    const running = foldRun(initialState('run-1'), started);
    const byEvolve = evolve(running, stopped);
    expect(byEvolve.status).toBe('RUNNING');
    expect(byEvolve.report?.terminalState).toBe('COMPLETED');
    expect(foldRun(running, stopped).status).toBe('COMPLETED');
  });
});

describe("every reader's status is the machine's", () => {
  /** A log this version does not write: a COMPLETED run resumed (the machine refuses the move). */
  function forgedResume(): RecordedEvent[] {
    const { log, clock } = recorded(
      { type: 'StartRun', runId: 'run-1', policy: policy() },
      { type: 'RequestToolCall', callId: 'c1', tool: 'search', args: { q: 'x' } },
      { type: 'CompleteToolCall', callId: 'c1', kind: 'SUCCESS', resultHash: 'h' },
      { type: 'Finish', verified: true },
    );
    const last = log.at(-1) as RecordedEvent;
    const resumed: RecordedEvent = {
      eventId: `run-1/${last.seq + 1}`,
      runId: 'run-1',
      seq: last.seq + 1,
      atMs: clock.now(),
      event: {
        type: 'RunResumed',
        preconditionChange: 'forged',
        approvedBy: null,
        fromCheckpoint: null,
        progressVersion: 0,
        policy: null,
      },
    };
    return [...log, resumed];
  }

  it('projections, a run timeline and the run list keep a COMPLETED run COMPLETED over a resume the machine refuses', () => {
    const log = forgedResume();
    const projections = new Projections().applyAll(log);
    expect(projections.runs.get('run-1')?.status).toBe('COMPLETED');
    // The event's data is still folded: the log is what it is; only the status is the machine's.
    expect(projections.runs.get('run-1')?.resumes).toBe(1);
    const timeline = new RunTimelineFold('run-1');
    for (const r of log) timeline.apply(r);
    expect(timeline.timeline()?.state.status).toBe('COMPLETED');
    const list = new RunListFold();
    for (const r of log) list.apply(r);
    expect(list.rows()[0]?.state).toBe('COMPLETED');
    // A live run never reads it: loading such a log stops with the machine's refusal.
    expect(() => new RunActor('run-1', deps, new FakeClock(0), log)).toThrow(
      expect.objectContaining({ code: 'illegal_transition' }),
    );
  });

  it("a projection's run is the live run, status and wait included, through every move", () => {
    const log = aWholeLifecycle();
    const live = new RunActor('run-1', deps, new FakeClock(0));
    const projections = new Projections();
    for (const r of log) {
      live.commit([r]);
      projections.apply(r);
      expect(projections.runs.get('run-1')).toEqual(live.state);
      expect(live.getSnapshot().value).toBe(live.state.status);
    }
  });
});
