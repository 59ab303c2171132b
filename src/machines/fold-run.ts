import { copyState, evolve, type RecordedEvent, type RunState } from '../domain/index.js';
import { machineStep } from './machine-step.js';
import { type MachineScope, machineEvent, runMachine, snapshotOf } from './run-machine.js';

/**
 * One recorded event through the run machine: the run's state after it, or null for an illegal
 * move. With an inspecting `scope` the event goes through XState's transition, for the observer
 * to see; else through the compiled table (machine-step.ts).
 */
export function stepRun(s: RunState, record: RecordedEvent, scope?: MachineScope): RunState | null {
  if (scope?.inspecting !== true) return machineStep(s, record);
  const from = snapshotOf(s);
  const next = runMachine.transition(from, machineEvent(record), scope.actorScope);
  if (next === from) return null;
  // XState merges an assigned context into a new object key by key; the run keeps the compact
  // literal its fold builds everywhere else.
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
