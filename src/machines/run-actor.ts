import { type SnapshotFrom, transition } from 'xstate';
import {
  type Command,
  type DeciderDeps,
  decide,
  evolve,
  initialState,
  LoopguardError,
  type RecordedEvent,
  type Result,
  type RunState,
  type RunStatus,
} from '../domain/index.js';
import { lifecycleEvent, runMachine } from './run-machine.js';

export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** A command as a caller gives it: the actor's clock stamps the time. */
export type CommandInput = DistributiveOmit<Command, 'atMs'>;

interface Fold {
  readonly next: RunState;
  /** Each status the run passes through, in order (empty when it stays where it was). */
  readonly statuses: readonly RunStatus[];
}

function foldTracking(from: RunState, records: readonly RecordedEvent[]): Fold {
  let s = from;
  const statuses: RunStatus[] = [];
  for (const r of records) {
    s = evolve(s, r);
    if (s.status !== (statuses.at(-1) ?? from.status)) statuses.push(s.status);
  }
  return { next: s, statuses };
}

type Lifecycle = SnapshotFrom<typeof runMachine>;

const lifecycleOf = (status: RunStatus): Lifecycle => runMachine.resolveState({ value: status });

/**
 * A run's actor: the XState lifecycle machine plus the domain state folded from recorded events,
 * and the two-step protocol that keeps "record first, then act": `propose` runs the pure decider
 * and returns the events with their envelopes, the caller makes them durable, and only then
 * `commit` moves the run. A proposal that is never committed leaves no trace.
 */
export class RunActor {
  private lifecycle: Lifecycle = lifecycleOf('NEW');
  private folded: RunState;
  /** The last proposal and the state it folds to, so a commit of it does not fold twice. */
  private proposed: {
    readonly records: readonly RecordedEvent[];
    readonly from: RunState;
    readonly fold: Fold;
  } | null = null;

  constructor(
    readonly runId: string,
    private readonly deps: DeciderDeps,
    private readonly clock: Clock,
    history: readonly RecordedEvent[] = [],
    /** A snapshot of the run's state that `history` continues (a resume from a snapshot store). */
    from: RunState | null = null,
  ) {
    this.folded = from ?? initialState(runId);
    if (from !== null) this.lifecycle = lifecycleOf(from.status);
    if (history.length > 0) this.commit(history);
  }

  get state(): RunState {
    return this.folded;
  }

  /** The machine's state: RUNNING, WAITING or a terminal state (NEW before the start). */
  get status(): RunStatus {
    return this.lifecycle.value as RunStatus;
  }

  propose(input: CommandInput): Result<RecordedEvent[]> {
    const atMs = this.clock.now();
    const state = this.folded;
    const decided = decide(state, { ...input, atMs } as Command, this.deps);
    if (!decided.ok) return decided;
    const records = decided.value.map((event, i) => ({
      eventId: `${this.runId}/${state.seq + i + 1}`,
      runId: this.runId,
      seq: state.seq + i + 1,
      atMs,
      event,
    }));
    this.proposed = { records, from: state, fold: foldTracking(state, records) };
    return { ok: true, value: records };
  }

  commit(records: readonly RecordedEvent[]): void {
    const p = this.proposed;
    this.proposed = null;
    const from = this.folded;
    const { next, statuses } =
      p !== null && p.records === records && p.from === from ? p.fold : foldTracking(from, records);
    // Events of one commit may pass through several statuses (a resume then a stop); the machine
    // follows each change, in order, so its history is the run's.
    for (const to of statuses) {
      const at = this.status;
      // XState's pure transition: the machine decides whether the lifecycle allows the move.
      const [moved] = transition(runMachine, this.lifecycle, lifecycleEvent(at, to));
      if (moved.value !== to) {
        throw new LoopguardError(
          'illegal_transition',
          `run ${this.runId}: the lifecycle does not allow ${at} -> ${to}`,
        );
      }
      this.lifecycle = lifecycleOf(to);
    }
    this.folded = next;
  }

  /** Kept for callers that end a run's actor; there is nothing to release. */
  stop(): void {}
}
