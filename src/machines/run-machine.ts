import {
  type AnyActorScope,
  assign,
  createActor,
  type InspectionEvent,
  type Observer,
  type SnapshotFrom,
  setup,
} from 'xstate';
import {
  type EventType,
  endsWait,
  evolve,
  initialState,
  NO_WAIT,
  type RecordedEvent,
  type RunState,
  type RunStatus,
  type TerminalState,
  waitBegun,
} from '../domain/index.js';

/**
 * A run's lifecycle as an XState v5 machine. Its events are the run's recorded domain events
 * (`{ type: 'RunStopped', record }`), its context is the run's state folded from them, and its
 * state value is the run's status: the machine says which events may move a run where, and it
 * alone writes the status (each state writes its name into the context as it is entered) and
 * the wait (begun by RunWaiting, cleared on leaving WAITING); `evolve` folds the rest. A run
 * starts, waits and runs again, ends in one terminal state, and leaves it only by an approved
 * resume (never once COMPLETED). An event a state does not take is an illegal move: the actor
 * asks the machine before anything is appended, so such a move is refused, never recorded.
 */
export type RunMachineEvent = { readonly type: EventType; readonly record: RecordedEvent };

/** Events that never move the status: taken in every state once the run has started. */
const STAYING = [
  'ToolCallRequested',
  'GuardDecided',
  'ToolCallCompleted',
  'ModelUsageRecorded',
  'BudgetWarning',
  'CheckpointRecorded',
  'OperationClaimed',
  'OperationCompleted',
  'OperationInDoubt',
  'OperationReleased',
  'FleetLoopDetected',
] as const satisfies readonly EventType[];

const ENDS: readonly TerminalState[] = [
  'COMPLETED',
  'STOPPED_LOOP_GUARD',
  'NEEDS_HUMAN',
  'FAILED',
  'PARTIAL',
];

const machine = setup({
  types: {
    context: {} as RunState,
    events: {} as RunMachineEvent,
    input: {} as { readonly runId: string },
  },
  actions: {
    fold: assign(({ context, event }) => evolve(context, event.record)),
    enter: assign((_, status: RunStatus) => ({ status })),
    beginWait: assign(({ context, event }) => {
      const e = event.record.event;
      return e.type === 'RunWaiting' ? waitBegun(context, e) : {};
    }),
    endWait: assign(NO_WAIT),
  },
  guards: {
    endsWait: ({ context, event }) => endsWait(context, event.record),
    stopsAs: ({ event }, terminal: TerminalState) =>
      event.record.event.type === 'RunStopped' && event.record.event.report.terminalState === terminal,
  },
});

const stay = Object.fromEntries(STAYING.map((t) => [t, { actions: 'fold' as const }]));
const stopTo = ENDS.map((terminal) => ({
  target: terminal,
  guard: { type: 'stopsAs' as const, params: terminal },
  actions: 'fold' as const,
}));
const resume = { target: 'RUNNING' as const, actions: 'fold' as const };
const wait = { target: 'WAITING' as const, actions: ['fold', 'beginWait'] as const };
const entered = (status: RunStatus) => ({ entry: { type: 'enter' as const, params: status } });
const ended = (status: TerminalState) => ({ ...entered(status), on: { ...stay, RunResumed: resume } });

export const runMachine = machine.createMachine({
  id: 'loopguard-run',
  context: ({ input }) => initialState(input.runId),
  initial: 'NEW',
  states: {
    NEW: { on: { RunStarted: { target: 'RUNNING', actions: 'fold' } } },
    RUNNING: {
      ...entered('RUNNING'),
      on: { ...stay, RunWaiting: wait, RunStopped: stopTo, RunResumed: resume },
    },
    WAITING: {
      ...entered('WAITING'),
      // Whatever takes a run out of its wait ends it: a deadline kept after it would hold the next one.
      exit: 'endWait',
      on: {
        ...stay,
        GuardDecided: [{ target: 'RUNNING', guard: 'endsWait', actions: 'fold' }, { actions: 'fold' }],
        RunWaiting: wait,
        RunStopped: stopTo,
        RunResumed: resume,
      },
    },
    // Not final: a stopped run still records the calls it refuses and the operations settled on it.
    COMPLETED: { ...entered('COMPLETED'), on: stay },
    STOPPED_LOOP_GUARD: ended('STOPPED_LOOP_GUARD'),
    NEEDS_HUMAN: ended('NEEDS_HUMAN'),
    FAILED: ended('FAILED'),
    PARTIAL: ended('PARTIAL'),
  },
});

export type RunSnapshot = SnapshotFrom<typeof runMachine>;

/** The machine event of a recorded event. */
export const machineEvent = (record: RecordedEvent): RunMachineEvent => ({ type: record.event.type, record });

/** Where the machine evaluates a guard's runs: an inspection observer sees each of their transitions. */
export interface MachineScope {
  readonly actorScope: AnyActorScope;
  /** Whether an observer looks on: then every event goes through XState, for it to see. */
  readonly inspecting: boolean;
}

export type RunInspector = Observer<InspectionEvent> | ((event: InspectionEvent) => void);

/**
 * One guard's scope for its runs' machine: an actor that is never started, whose system carries
 * the inspection observer, so XState's transition reports each run's microsteps to it.
 */
export function machineScope(inspect?: RunInspector): MachineScope {
  const self = createActor(runMachine, { input: { runId: '' }, ...(inspect ? { inspect } : {}) });
  const actorScope = {
    self,
    system: self.system,
    id: '',
    sessionId: '',
    defer: () => {},
    logger: () => {},
    stopChild: () => {},
    emit: () => {},
    actionExecutor: () => {},
  } as unknown as AnyActorScope;
  return { actorScope, inspecting: inspect !== undefined };
}
