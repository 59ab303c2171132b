import { setup } from 'xstate';
import type { RunStatus, TerminalState } from '../domain/index.js';

/**
 * A run's lifecycle. The domain's RunState (counters, windows, ledger view) is folded by the actor
 * from recorded events; this machine holds what the lifecycle allows: a run starts, waits and
 * runs again, ends in one terminal state, and leaves it only by an approved resume (never once
 * COMPLETED). A fold that asks for a transition the machine does not allow is a bug, and is caught.
 */
export type LifecycleEvent =
  | { readonly type: 'START' }
  | { readonly type: 'WAIT' }
  | { readonly type: 'RUN' }
  | { readonly type: 'STOP'; readonly terminal: TerminalState }
  | { readonly type: 'RESUME' };

const stopTo = (terminal: TerminalState) => ({
  target: terminal,
  guard: ({ event }: { event: LifecycleEvent }) => event.type === 'STOP' && event.terminal === terminal,
});
const STOP = ['COMPLETED', 'STOPPED_LOOP_GUARD', 'NEEDS_HUMAN', 'FAILED', 'PARTIAL'].map((t) =>
  stopTo(t as TerminalState),
);
const ended = { on: { RESUME: 'RUNNING' } };

export const runMachine = setup({ types: { events: {} as LifecycleEvent } }).createMachine({
  id: 'loopguard-run',
  initial: 'NEW',
  states: {
    NEW: { on: { START: 'RUNNING' } },
    RUNNING: { on: { WAIT: 'WAITING', STOP } },
    WAITING: { on: { RUN: 'RUNNING', STOP } },
    COMPLETED: {},
    STOPPED_LOOP_GUARD: ended,
    NEEDS_HUMAN: ended,
    FAILED: ended,
    PARTIAL: ended,
  },
});

/** The lifecycle event that takes a run from one status to the next. */
export function lifecycleEvent(from: RunStatus, to: RunStatus): LifecycleEvent {
  if (from === 'NEW') return { type: 'START' };
  if (to === 'WAITING') return { type: 'WAIT' };
  if (to === 'RUNNING') return from === 'WAITING' ? { type: 'RUN' } : { type: 'RESUME' };
  return { type: 'STOP', terminal: to as TerminalState };
}
