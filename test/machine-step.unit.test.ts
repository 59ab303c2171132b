/**
 * A step nobody inspects takes the transition the machine's definition selects and applies its
 * actions' assignments without XState's interpreter (src/machines/machine-step.ts). It must be
 * XState's own transition, state for state: here both run over every recorded event of the shared
 * traces and of a whole lifecycle, from every state of the machine.
 */

import { describe, expect, it } from 'vitest';
import { transition } from 'xstate';
import {
  copyState,
  DEFAULT_POLICY,
  initialState,
  mayEndWait,
  type RecordedEvent,
  type RunState,
} from '../src/domain/index.js';
import { type CommandInput, foldRun, machineEvent, RunActor, runMachine } from '../src/machines/index.js';
import { machineStep, movesStatus, statusStep } from '../src/machines/machine-step.js';
import { replayRun } from '../src/trace/replay.js';
import { deps, FakeClock, policy } from './support/given.js';
import { recordedTraces } from './support/recorded-traces.js';

/** XState's transition from the run's state (its status the snapshot's value), or null where it takes none. */
function byXState(s: RunState, r: RecordedEvent): RunState | null {
  const from = runMachine.resolveState({ value: s.status, context: s });
  const [next] = transition(runMachine, from, machineEvent(r));
  return next === from ? null : copyState(next.context);
}

/** A run that waits after a RETRYABLE, is polled while it waits, runs again, is stopped and resumed. */
function lifecycle(): RecordedEvent[] {
  const clock = new FakeClock(0);
  const actor = new RunActor('run-1', deps, clock);
  const log: RecordedEvent[] = [];
  const cmds: CommandInput[] = [
    { type: 'StartRun', runId: 'run-1', policy: policy() },
    { type: 'RequestToolCall', callId: 'c1', tool: 'api', args: { q: 1 } },
    { type: 'CompleteToolCall', callId: 'c1', kind: 'RETRYABLE', resultHash: 'e', retryAfterMs: 50 },
    { type: 'RequestToolCall', callId: 'c2', tool: 'api', args: { q: 1 } },
    { type: 'RequestToolCall', callId: 'c3', tool: 'other', args: { q: 2 } },
    { type: 'CompleteToolCall', callId: 'c3', kind: 'SUCCESS', resultHash: 'ok3' },
    { type: 'RequestToolCall', callId: 'c4', tool: 'api', args: { q: 1 } },
    { type: 'CompleteToolCall', callId: 'c4', kind: 'SUCCESS', resultHash: 'ok' },
    { type: 'Cancel', reason: 'enough' },
    { type: 'Resume', preconditionChange: 'more budget', approvedBy: 'ops' },
    { type: 'Finish', verified: true },
  ];
  for (const c of cmds) {
    const r = actor.propose(c);
    if (r.ok) {
      log.push(...r.value);
      actor.commit(r.value);
    }
    clock.advance(c.type === 'CompleteToolCall' && c.kind === 'RETRYABLE' ? 10 : 100);
  }
  return log;
}

/** What sets a log apart for the machine: its event types and how it ends. */
const kinds = (log: readonly RecordedEvent[]): string[] =>
  log.map((r) =>
    r.event.type === 'RunStopped' ? `RunStopped:${r.event.report.terminalState}` : r.event.type,
  );

/** The recorded runs that each bring an event type or an ending no run before them has (XState's step is slow). */
function varied(logs: readonly (readonly RecordedEvent[])[]): (readonly RecordedEvent[])[] {
  const seen = new Set<string>();
  return logs.filter((log) => {
    const fresh = kinds(log).filter((k) => !seen.has(k));
    for (const k of fresh) seen.add(k);
    return fresh.length > 0;
  });
}

const STATES = Object.keys(runMachine.root.states);

describe("the machine's step without its interpreter", () => {
  it("is XState's transition for every recorded event from every state of the machine", () => {
    const logs = [
      lifecycle(),
      ...varied(recordedTraces().map((run) => replayRun(run, DEFAULT_POLICY, deps).events)),
    ];
    const types = new Set<string>();
    const moves = new Set<string>();
    let compared = 0;
    for (const log of logs) {
      let s = initialState(log[0]?.runId ?? 'run');
      for (const r of log) {
        types.add(r.event.type);
        for (const value of STATES) {
          const from = value === s.status ? s : copyState({ ...s, status: value as RunState['status'] });
          const direct = machineStep(from, r);
          expect(direct, `${value} on ${r.event.type} (${r.eventId})`).toEqual(byXState(from, r));
          if (direct !== null && direct.status !== value) moves.add(`${value}->${direct.status}`);
          compared++;
        }
        s = foldRun(s, r);
      }
    }
    // The comparison reached the guarded moves: a wait ended by a call, every way a run ends.
    expect([...types]).toEqual(expect.arrayContaining(['RunWaiting', 'RunStopped', 'RunResumed']));
    expect([...moves]).toEqual(
      expect.arrayContaining([
        'NEW->RUNNING',
        'RUNNING->WAITING',
        'WAITING->RUNNING',
        'RUNNING->COMPLETED',
        'RUNNING->PARTIAL',
        'PARTIAL->RUNNING',
      ]),
    );
    expect(compared).toBeGreaterThan(500);
  });

  it('gives the status from the status alone wherever no guard reads more of the state, and says where one does', () => {
    const logs = [
      lifecycle(),
      ...varied(recordedTraces().map((run) => replayRun(run, DEFAULT_POLICY, deps).events)),
    ];
    let asked = 0;
    for (const log of logs) {
      let s = initialState(log[0]?.runId ?? 'run');
      for (const r of log) {
        for (const value of STATES) {
          const from = value === s.status ? s : copyState({ ...s, status: value as RunState['status'] });
          const machine = foldRun(from, r).status;
          const alone = statusStep(from.status, r);
          if (alone === null) {
            expect(from.status).toBe('WAITING');
            expect(mayEndWait(r)).toBe(true);
            asked++;
          } else expect(alone, `${value} on ${r.event.type} (${r.eventId})`).toBe(machine);
          if (!movesStatus(from.status, r.event.type)) expect(machine).toBe(from.status);
        }
        s = foldRun(s, r);
      }
    }
    expect(asked).toBeGreaterThan(0);
  });
});
