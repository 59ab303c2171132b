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
  mayEndWait,
  NO_WAIT,
  patch,
  type RecordedEvent,
  type RunState,
  type RunStatus,
  TERMINAL_STATES,
  type TerminalState,
  waitBegun,
} from '../domain/index.js';

/**
 * A run's lifecycle as an XState v5 machine. Its events are the run's recorded domain events
 * (`{ type: 'RunStopped', record }`), its context is the run's state folded from them, and its
 * state value is the run's status: it alone writes the status and the wait (begun by RunWaiting,
 * ended by leaving WAITING); `evolve` folds the rest. A run ends in one terminal state and leaves
 * it only by an approved resume (never once COMPLETED). An event a state does not take is an
 * illegal move: the actor asks the machine before anything is appended, so it is never recorded.
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

/**
 * What the machine's actions assign and what its guards ask, as plain functions of the run's state
 * and a recorded event: XState runs them through `assign` and its guard evaluation, and a step
 * nobody inspects applies them from the machine's own transition table (machine-step.ts), so both
 * paths run the same code.
 */
export const ASSIGNMENTS = {
  fold: (s: RunState, record: RecordedEvent, _params?: undefined): RunState => evolve(s, record),
  /**
   * A move in one assignment (XState copies the whole context for each): the event's data folded,
   * the status it leads to, and the wait that a RunWaiting begins and that leaving WAITING ends.
   */
  move: (s: RunState, record: RecordedEvent, to: RunStatus): RunState => {
    const e = record.event;
    const wait = e.type === 'RunWaiting' ? waitBegun(s, e) : to === 'WAITING' ? s : NO_WAIT;
    return patch(evolve(s, record), {
      status: to,
      waitUntilMs: wait.waitUntilMs,
      waitCallFingerprint: wait.waitCallFingerprint,
    });
  },
};
export const GUARDS = {
  endsWait: (s: RunState, record: RecordedEvent, _params?: undefined): boolean => endsWait(s, record),
  stopsAs: (_s: RunState, record: RecordedEvent, terminal: TerminalState): boolean =>
    record.event.type === 'RunStopped' && record.event.report.terminalState === terminal,
};
/**
 * Per guard, whether its answer on a record may rest on more of the run's state than its status;
 * where it does not, a reader that keeps only statuses takes the step without folding the run
 * (machine-step.ts, statusStep).
 */
export const GUARD_READS_STATE: { readonly [G in keyof typeof GUARDS]: (record: RecordedEvent) => boolean } =
  { endsWait: mayEndWait, stopsAs: () => false };

const machine = setup({
  types: {
    context: {} as RunState,
    events: {} as RunMachineEvent,
    input: {} as { readonly runId: string },
  },
  actions: {
    fold: assign(({ context, event }) => ASSIGNMENTS.fold(context, event.record)),
    move: assign(({ context, event }, to: RunStatus) => ASSIGNMENTS.move(context, event.record, to)),
  },
  guards: {
    endsWait: ({ context, event }) => GUARDS.endsWait(context, event.record),
    stopsAs: ({ context, event }, terminal: TerminalState) => GUARDS.stopsAs(context, event.record, terminal),
  },
});

const stay = Object.fromEntries(STAYING.map((t) => [t, { actions: 'fold' as const }]));
/** A transition to `target` that moves the run there. */
const to = <T extends RunStatus>(target: T) => ({
  target,
  actions: { type: 'move' as const, params: target },
});
const stopTo = TERMINAL_STATES.map((terminal) => ({
  ...to(terminal),
  guard: { type: 'stopsAs' as const, params: terminal },
}));
const ended = { on: { ...stay, RunResumed: to('RUNNING') } };

export const runMachine = machine.createMachine({
  id: 'loopguard-run',
  context: ({ input }) => initialState(input.runId),
  initial: 'NEW',
  states: {
    NEW: { on: { RunStarted: to('RUNNING') } },
    RUNNING: {
      on: { ...stay, RunWaiting: to('WAITING'), RunStopped: stopTo, RunResumed: to('RUNNING') },
    },
    WAITING: {
      on: {
        ...stay,
        GuardDecided: [{ ...to('RUNNING'), guard: 'endsWait' }, { actions: 'fold' }],
        RunWaiting: to('WAITING'),
        RunStopped: stopTo,
        RunResumed: to('RUNNING'),
      },
    },
    // Not final: a stopped run still records the calls it refuses and the operations settled on it.
    COMPLETED: { on: stay },
    STOPPED_LOOP_GUARD: ended,
    NEEDS_HUMAN: ended,
    FAILED: ended,
    PARTIAL: ended,
  },
});

export type RunSnapshot = SnapshotFrom<typeof runMachine>;

/** The machine's snapshot of a run at `state`: its value is the run's status. */
export const snapshotOf = (state: RunState): RunSnapshot =>
  runMachine.resolveState({ value: state.status, context: state });

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
