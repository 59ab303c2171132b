import { describe, expect, it } from 'vitest';
import { type DomainEvent, initialState, type RecordedEvent } from '../src/domain/index.js';
import { type CommandInput, foldRun, RunActor } from '../src/machines/index.js';
import { deps, FakeClock, policy } from './support/given.js';

/** Propose, make durable (here: an array), then commit, as the runtime does. */
function harness(p = policy()) {
  const clock = new FakeClock(0);
  const actor = new RunActor('run-m', deps, clock);
  const log: RecordedEvent[] = [];
  const send = (cmd: CommandInput): DomainEvent[] => {
    const r = actor.propose(cmd);
    if (!r.ok) throw r.error;
    log.push(...r.value);
    actor.commit(r.value);
    return r.value.map((rec) => rec.event);
  };
  send({ type: 'StartRun', runId: 'run-m', policy: p });
  return { clock, actor, log, send };
}
const decision = (events: DomainEvent[]) => events.find((e) => e.type === 'GuardDecided');

describe('RunActor: the machine state follows the run status', () => {
  it('NEW before the start, RUNNING after', () => {
    const actor = new RunActor('r', deps, new FakeClock());
    expect(actor.status).toBe('NEW');
    const r = actor.propose({ type: 'StartRun', runId: 'r', policy: policy() });
    if (!r.ok) throw r.error;
    expect(actor.status).toBe('NEW');
    actor.commit(r.value);
    expect(actor.status).toBe('RUNNING');
  });

  it('RUNNING -> WAITING after RETRYABLE -> RUNNING on the executed retry -> STOPPED_LOOP_GUARD -> RUNNING on resume', () => {
    const { clock, actor, send } = harness();
    const seen: string[] = [actor.status];
    send({ type: 'RequestToolCall', callId: 'c1', tool: 'api', args: { q: 1 } });
    clock.advance(10);
    send({ type: 'CompleteToolCall', callId: 'c1', kind: 'RETRYABLE', resultHash: 'e' });
    seen.push(actor.status);
    expect(actor.state.waitUntilMs).toBe(1010);

    clock.advance(500);
    const early = send({ type: 'RequestToolCall', callId: 'c2', tool: 'api', args: { q: 1 } });
    expect(decision(early)).toMatchObject({ decision: 'wait', rule: 'backoff' });
    seen.push(actor.status);

    clock.set(1010);
    send({ type: 'RequestToolCall', callId: 'c3', tool: 'api', args: { q: 1 } });
    seen.push(actor.status);
    send({ type: 'CompleteToolCall', callId: 'c3', kind: 'SUCCESS', resultHash: 'ok' });
    send({ type: 'RequestToolCall', callId: 'c4', tool: 'api', args: { q: 1 } });
    send({ type: 'CompleteToolCall', callId: 'c4', kind: 'SUCCESS', resultHash: 'ok' });
    seen.push(actor.status);
    const stop = send({ type: 'RequestToolCall', callId: 'c5', tool: 'api', args: { q: 1 } });
    expect(decision(stop)).toMatchObject({ decision: 'stop_partial', rule: 'exact_repeat' });
    seen.push(actor.status);
    send({ type: 'Resume', preconditionChange: 'api fixed', approvedBy: 'ops' });
    seen.push(actor.status);
    expect(seen).toEqual([
      'RUNNING',
      'WAITING',
      'WAITING',
      'RUNNING',
      'RUNNING',
      'STOPPED_LOOP_GUARD',
      'RUNNING',
    ]);
    expect(actor.state.status).toBe(actor.status);
  });

  it('follows NEEDS_HUMAN, FAILED, COMPLETED and PARTIAL', () => {
    const ends: [CommandInput[], string][] = [
      [
        [
          {
            type: 'CompleteToolCall',
            callId: 'c1',
            kind: 'FATAL',
            code: 'permission_denied',
            resultHash: 'e',
          },
        ],
        'NEEDS_HUMAN',
      ],
      [[{ type: 'CompleteToolCall', callId: 'c1', kind: 'FATAL', code: 'boom', resultHash: 'e' }], 'FAILED'],
      [
        [
          { type: 'CompleteToolCall', callId: 'c1', kind: 'SUCCESS', resultHash: 'e' },
          { type: 'Finish', verified: true },
        ],
        'COMPLETED',
      ],
      [
        [
          { type: 'CompleteToolCall', callId: 'c1', kind: 'SUCCESS', resultHash: 'e' },
          { type: 'Cancel', reason: 'stop' },
        ],
        'PARTIAL',
      ],
    ];
    for (const [cmds, status] of ends) {
      const { actor, send } = harness();
      send({ type: 'RequestToolCall', callId: 'c1', tool: 't', args: {} });
      for (const c of cmds) send(c);
      expect(actor.status, status).toBe(status);
    }
  });

  it('a PENDING poll waits and the next executed poll runs again', () => {
    const { clock, actor, send } = harness();
    send({ type: 'RequestToolCall', callId: 'p1', tool: 'job', args: { id: 'j' } });
    send({ type: 'CompleteToolCall', callId: 'p1', kind: 'PENDING', resultHash: '10%' });
    expect(actor.status).toBe('WAITING');
    clock.advance(1000);
    send({ type: 'RequestToolCall', callId: 'p2', tool: 'job', args: { id: 'j' } });
    expect(actor.status).toBe('RUNNING');
  });

  it('a proposal that is never committed leaves no trace', () => {
    const { actor } = harness();
    const before = actor.state;
    const r = actor.propose({ type: 'RequestToolCall', callId: 'c1', tool: 't', args: {} });
    expect(r.ok).toBe(true);
    expect(actor.state).toEqual(before);
  });

  it('stamps events with the injected clock and consecutive sequence numbers', () => {
    const { clock, actor, log, send } = harness();
    clock.set(4242);
    send({ type: 'RequestToolCall', callId: 'c1', tool: 't', args: {} });
    expect(log.slice(1).map((r) => [r.seq, r.atMs, r.eventId])).toEqual([
      [2, 4242, 'run-m/2'],
      [3, 4242, 'run-m/3'],
    ]);
    expect(actor.state.seq).toBe(3);
  });

  it('a fresh actor restored from the events has the same snapshot and state value', () => {
    const { clock, actor, log, send } = harness();
    send({ type: 'RequestToolCall', callId: 'c1', tool: 'api', args: {} });
    send({ type: 'CompleteToolCall', callId: 'c1', kind: 'RETRYABLE', resultHash: 'e' });
    const restored = new RunActor('run-m', deps, clock, log);
    expect(restored.status).toBe('WAITING');
    expect(restored.state).toEqual(actor.state);
    expect(log.reduce(foldRun, initialState('run-m'))).toEqual(actor.state);
  });
});
