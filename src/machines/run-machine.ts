import { assign, setup } from 'xstate';
import { evolve, initialState, type RecordedEvent, type RunState, type RunStatus } from '../domain/index.js';

export type RunMachineEvent = { readonly type: 'apply'; readonly events: readonly RecordedEvent[] };

const STATUSES: readonly RunStatus[] = [
  'NEW',
  'RUNNING',
  'WAITING',
  'COMPLETED',
  'STOPPED_LOOP_GUARD',
  'NEEDS_HUMAN',
  'FAILED',
  'PARTIAL',
];

/** Every state leaves for whichever state the folded context now says; terminal ones too, for resume. */
const follow = (self: RunStatus) => ({
  always: STATUSES.filter((s) => s !== self).map((target) => ({
    target,
    guard: ({ context }: { context: RunState }) => context.status === target,
  })),
});

/**
 * One actor per run. Its context is the domain's RunState and its only input is recorded events:
 * the decision was already made by the pure decider and made durable in the log, so replaying a
 * run's events through a fresh actor gives the same snapshot as the live one.
 */
export const runMachine = setup({
  types: {
    context: {} as RunState,
    events: {} as RunMachineEvent,
    input: {} as { runId: string; state?: RunState },
  },
}).createMachine({
  id: 'loopguard-run',
  context: ({ input }) => input.state ?? initialState(input.runId),
  initial: 'NEW',
  on: {
    apply: { actions: assign(({ context, event }) => event.events.reduce(evolve, context)) },
  },
  states: {
    NEW: follow('NEW'),
    RUNNING: follow('RUNNING'),
    WAITING: follow('WAITING'),
    COMPLETED: follow('COMPLETED'),
    STOPPED_LOOP_GUARD: follow('STOPPED_LOOP_GUARD'),
    NEEDS_HUMAN: follow('NEEDS_HUMAN'),
    FAILED: follow('FAILED'),
    PARTIAL: follow('PARTIAL'),
  },
});
