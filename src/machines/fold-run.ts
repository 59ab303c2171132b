import type { AnyActorScope } from 'xstate';
import { copyState, evolve, type RecordedEvent, type RunState } from '../domain/index.js';
import { type MachineScope, machineEvent, runMachine } from './run-machine.js';

/**
 * Per state, the events it takes without moving and without a guard: the machine's own table,
 * read once from its definition. Those are folded directly (XState's evaluation of a transition
 * costs some 40 times the fold, and such a transition runs the fold alone); every other event
 * goes through the machine.
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

/**
 * The scope of a step nobody inspects. XState's `transition()` makes an inert actor of the machine
 * for each call (building and evaluating its initial state), which cost a rebuild more than all
 * of its folds; this machine has only `assign` actions and no children, so what a transition needs
 * of its scope is a place to report microsteps to, and a pure step discards them. Made per step:
 * XState swaps the scope's executor while it runs.
 */
const pureScope = (): AnyActorScope =>
  ({
    self: undefined,
    system: { _sendInspectionEvent: () => {} },
    id: '',
    sessionId: '',
    defer: () => {},
    logger: () => {},
    stopChild: () => {},
    emit: () => {},
    actionExecutor: () => {},
  }) as unknown as AnyActorScope;

/**
 * One recorded event through the run machine: the run's state after it (its status the machine's
 * value), or null when the machine does not take it in the run's status (an illegal move). With
 * an inspecting `scope`, every event goes through XState, for the observer to see.
 */
export function stepRun(s: RunState, record: RecordedEvent, scope?: MachineScope): RunState | null {
  if (scope?.inspecting !== true && STAYS.get(s.status)?.has(record.event.type) === true)
    return evolve(s, record);
  const from = runMachine.resolveState({ value: s.status, context: s });
  const next = runMachine.transition(from, machineEvent(record), scope?.actorScope ?? pureScope());
  if (next === from) return null;
  // XState merges an assigned context into a new object key by key; the run keeps the compact
  // literal its fold builds everywhere else (half the bytes per live run).
  return copyState(next.context);
}

/**
 * A reader's fold from a step: a recorded event the machine does not take (a log this version
 * did not write) still has its data folded, and the status stays where the machine left it.
 * A live run never gets there: its actor refuses such a move before it is recorded.
 */
export const keepingStatus =
  (step: (s: RunState, record: RecordedEvent) => RunState | null) =>
  (s: RunState, record: RecordedEvent): RunState =>
    step(s, record) ?? evolve(s, record);

/**
 * The one fold of a recorded run for every reader that needs its state (projections, rebuild,
 * audit, whatif, the timeline, the run list): the status moves only by the run machine.
 */
export const foldRun: (s: RunState, record: RecordedEvent) => RunState = keepingStatus(stepRun);
