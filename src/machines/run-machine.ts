import {
  type AnyActorScope,
  assign,
  createActor,
  type InspectionEvent,
  type Observer,
  type SnapshotFrom,
  setup,
  transition,
} from 'xstate';
import {
  copyState,
  type EventType,
  endsWait,
  evolve,
  initialState,
  type RecordedEvent,
  type RunState,
  type RunStatus,
  type TerminalState,
} from '../domain/index.js';

/**
 * A run's lifecycle as an XState v5 machine. Its events are the run's recorded domain events
 * (`{ type: 'RunStopped', record }`), its context is the run's state folded from them, and its
 * state value is the run's status: the machine says which events may move a run where. A run
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
const ended = { on: { ...stay, RunResumed: resume } };

export const runMachine = machine.createMachine({
  id: 'loopguard-run',
  context: ({ input }) => initialState(input.runId),
  initial: 'NEW',
  states: {
    NEW: { on: { RunStarted: { target: 'RUNNING', actions: 'fold' } } },
    RUNNING: {
      on: {
        ...stay,
        RunWaiting: { target: 'WAITING', actions: 'fold' },
        RunStopped: stopTo,
        RunResumed: resume,
      },
    },
    WAITING: {
      on: {
        ...stay,
        GuardDecided: [{ target: 'RUNNING', guard: 'endsWait', actions: 'fold' }, { actions: 'fold' }],
        RunWaiting: { target: 'WAITING', actions: 'fold' },
        RunStopped: stopTo,
        RunResumed: resume,
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

/** The machine event of a recorded event. */
export const machineEvent = (record: RecordedEvent): RunMachineEvent => ({ type: record.event.type, record });

/**
 * Per state, the events it takes without moving and without a guard: the machine's own table,
 * read once from its definition. An actor folds those directly (XState's evaluation of a
 * transition costs some 40 times the fold), and takes every other event through the machine.
 */
const STAYS: ReadonlyMap<string, ReadonlySet<string>> = new Map(
  Object.entries(runMachine.root.states).map(([value, node]) => [
    value,
    new Set(
      [...node.transitions.entries()]
        .filter(([, ts]) => ts.length === 1 && ts[0]?.target === undefined && ts[0]?.guard === undefined)
        .map(([type]) => type),
    ),
  ]),
);

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

/**
 * One recorded event through the machine, from status `value` and state `s`: the status and state
 * it leads to, or null when the machine does not take it there (an illegal move, or a fold that
 * disagrees with the machine's target).
 */
export function step(
  value: RunStatus,
  s: RunState,
  record: RecordedEvent,
  scope?: MachineScope,
  fold: (s: RunState, rec: RecordedEvent) => RunState = evolve,
): { readonly value: RunStatus; readonly state: RunState } | null {
  if (scope?.inspecting !== true && STAYS.get(value)?.has(record.event.type) === true) {
    const state = fold(s, record);
    return state.status === value ? { value, state } : null;
  }
  const from = runMachine.resolveState({ value, context: s });
  const event = machineEvent(record);
  const next =
    scope === undefined
      ? transition(runMachine, from, event)[0]
      : runMachine.transition(from, event, scope.actorScope);
  if (next === from) return null;
  const to = next.value as RunStatus;
  // XState merges an assigned context into a new object key by key; the run keeps the compact
  // literal its fold builds everywhere else (half the bytes per live run).
  return next.context.status === to ? { value: to, state: copyState(next.context) } : null;
}
