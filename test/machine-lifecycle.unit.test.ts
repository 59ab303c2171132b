/**
 * The run machine owns the lifecycle: an actor asks it before anything is appended, so a move the
 * lifecycle does not allow is a refused command, never a durable record. Its snapshot is the
 * run's (value: status, context: state), and an inspection observer sees each run's transitions.
 */

import { describe, expect, it } from 'vitest';
import type { InspectionEvent } from 'xstate';
import { transition } from 'xstate';
import { type RecordedEvent, type RunSnapshot, type RunState, runMachine } from '../src/index.js';
import { SqliteLedger } from '../src/log/embedded/sqlite-ledger.js';
import { type CommandInput, ManualClock, RunActor } from '../src/machines/index.js';
import { Guard } from '../src/runtime/guard.js';
import { tempDirs } from './support/cli-run.js';
import { deps, FakeClock, policy } from './support/given.js';
import { memoryStream } from './support/memory-stream.js';

const tempDir = tempDirs('lg-machine-');

async function guardWith(inspect?: (e: InspectionEvent) => void) {
  const store = await memoryStream();
  const guard = new Guard({
    store,
    ledger: SqliteLedger.open(tempDir()),
    secretKey: 'test-key',
    clock: new ManualClock(0),
    ...(inspect ? { inspect } : {}),
  });
  return { guard, store };
}

function actorAt(...cmds: CommandInput[]): RunActor {
  const actor = new RunActor('run-1', deps, new FakeClock(0));
  for (const c of cmds) {
    const r = actor.propose(c);
    if (!r.ok) throw r.error;
    actor.commit(r.value);
  }
  return actor;
}

describe('an illegal move is refused before the append', () => {
  it('given a COMPLETED run, a resume is refused with illegal_transition and nothing is recorded', async () => {
    const { guard, store } = await guardWith();
    const run = await guard.startRun({ runId: 'done' });
    await run.call({ tool: 'search', args: { q: 'x' } }, () => 'found');
    await run.finish({ verified: true });
    const before = await store.readStream('done');
    await expect(
      guard.resume('done', { preconditionChange: 'more work', approvedBy: 'ops' }),
    ).rejects.toMatchObject({
      code: 'illegal_transition',
      details: { status: 'COMPLETED', event: 'RunResumed' },
    });
    expect(await store.readStream('done')).toEqual(before);
    expect(run.getSnapshot().value).toBe('COMPLETED');
    await guard.close();
  });

  it('the actor refuses the proposal itself: no records, the run stays where it was', () => {
    const actor = actorAt(
      { type: 'StartRun', runId: 'run-1', policy: policy() },
      { type: 'Finish', verified: true },
    );
    const r = actor.propose({ type: 'Resume', preconditionChange: 'more work' });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.code).toBe('illegal_transition');
    expect(actor.status).toBe('COMPLETED');
  });

  it('a durable record the machine does not take stops loading (a log this version did not write)', () => {
    const actor = new RunActor('run-1', deps, new FakeClock(0));
    const r = actor.propose({ type: 'StartRun', runId: 'run-1', policy: policy() });
    if (!r.ok) throw r.error;
    const [started] = r.value as [RecordedEvent];
    const twice = [started, { ...started, eventId: 'run-1/2', seq: 2 }];
    expect(() => new RunActor('run-1', deps, new FakeClock(0), twice)).toThrow(
      expect.objectContaining({ code: 'illegal_transition' }),
    );
  });
});

describe('the run machine', () => {
  it('run.getSnapshot() is the XState snapshot: value the status, context the run state', async () => {
    const { guard } = await guardWith();
    const run = await guard.startRun({ runId: 's1' });
    const snap: RunSnapshot = run.getSnapshot();
    expect(snap.value).toBe('RUNNING');
    expect(snap.context).toBe(run.state);
    expect(snap.matches('RUNNING')).toBe(true);
    // The snapshot goes on through the exported machine with XState's pure transition alone.
    const stop = await run.cancel('user stopped it');
    expect(stop.status).toBe('PARTIAL');
    const [next] = transition(runMachine, snap, { type: 'RunResumed', record: resumedAfter(run.state) });
    expect(next.value).toBe('RUNNING');
    await guard.close();
  });

  it('createGuard({ inspect }) sees each transition of each run, in order', async () => {
    const seen: { runId: string; value: string; event: string }[] = [];
    const { guard } = await guardWith((e) => {
      if (e.type !== '@xstate.microstep') return;
      const snap = e.snapshot as RunSnapshot;
      seen.push({ runId: snap.context.runId, value: String(snap.value), event: e.event.type });
    });
    const a = await guard.startRun({ runId: 'a' });
    const b = await guard.startRun({ runId: 'b' });
    await a.call({ tool: 'search', args: { q: 1 } }, () => 'r1');
    await b.finish({ verified: true });
    await guard.close();
    expect(seen.filter((s) => s.runId === 'b').map((s) => [s.event, s.value])).toEqual([
      ['RunStarted', 'RUNNING'],
      ['RunStopped', 'COMPLETED'],
    ]);
    expect(seen.filter((s) => s.runId === 'a').map((s) => s.event)).toEqual([
      'RunStarted',
      'ToolCallRequested',
      'GuardDecided',
      'ToolCallCompleted',
      'GuardDecided',
    ]);
  });

  it("a live run costs its state (its status the machine's value), no actor: well under 4 KiB", () => {
    const actor = actorAt({ type: 'StartRun', runId: 'run-1', policy: policy() });
    expect(Object.keys(actor).sort()).toEqual(['clock', 'deps', 'folded', 'proposed', 'runId', 'scope']);
    expect(JSON.stringify(actor.state).length).toBeLessThan(4096);
  });
});

function resumedAfter(s: RunState): RecordedEvent {
  return {
    eventId: `${s.runId}/${s.seq + 1}`,
    runId: s.runId,
    seq: s.seq + 1,
    atMs: s.lastAtMs,
    event: {
      type: 'RunResumed',
      preconditionChange: 'fixed',
      approvedBy: null,
      fromCheckpoint: null,
      progressVersion: s.progressVersion,
      policy: null,
    },
  };
}
