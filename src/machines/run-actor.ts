import {
  type Command,
  type DeciderDeps,
  decide,
  err,
  IllegalStateError,
  initialState,
  ok,
  type RecordedEvent,
  type Result,
  type RunState,
  type RunStatus,
} from '../domain/index.js';
import { foldMemo } from './fold-memo.js';
import { keepingStatus, stepRun } from './fold-run.js';
import { type MachineScope, type RunSnapshot, snapshotOf } from './run-machine.js';

export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** A command as a caller gives it: the actor's clock stamps the time. */
export type CommandInput = DistributiveOmit<Command, 'atMs'>;

/**
 * A run's actor: its state (the run machine's context, its status the machine's value) and the
 * two-step protocol that keeps "record first, then act". `propose` runs the pure decider and then
 * the machine over the events it decided: an event the machine does not take is a refused command
 * (`illegal_transition`) and nothing reaches the log. The caller makes the proposal durable, and
 * only then `commit` moves the run. No XState actor per run: a live run costs its state alone.
 */
export class RunActor {
  private folded: RunState;
  /** The last proposal and where it takes the run, so a commit of it does not fold twice. */
  private proposed: {
    readonly records: readonly RecordedEvent[];
    readonly from: RunState;
    readonly to: RunState;
  } | null = null;

  constructor(
    readonly runId: string,
    private readonly deps: DeciderDeps,
    private readonly clock: Clock,
    history: readonly RecordedEvent[] = [],
    /** A snapshot of the run's state that `history` continues (a resume from a snapshot store). */
    from: RunState | null = null,
    /** The guard's machine scope (an inspection observer); none: XState's pure transition alone. */
    private readonly scope?: MachineScope,
  ) {
    this.folded = from ?? initialState(runId);
    if (history.length > 0) this.commit(history);
  }

  get state(): RunState {
    return this.folded;
  }

  /** The machine's state: RUNNING, WAITING or a terminal state (NEW before the start). */
  get status(): RunStatus {
    return this.folded.status;
  }

  /** The run machine's snapshot: `value` the run's status, `context` the run's state. */
  getSnapshot(): RunSnapshot {
    return snapshotOf(this.folded);
  }

  propose(input: CommandInput): Result<RecordedEvent[]> {
    const atMs = this.clock.now();
    const state = this.folded;
    // The decider looks ahead through the machine and the actor then takes the same events through
    // it: one memo for both, so each event is folded once.
    const step = foldMemo(stepRun);
    const decided = decide(state, { ...input, atMs } as Command, this.deps, keepingStatus(step));
    if (!decided.ok) return decided;
    const records = decided.value.map((event, i) => ({
      eventId: `${this.runId}/${state.seq + i + 1}`,
      runId: this.runId,
      seq: state.seq + i + 1,
      atMs,
      event,
    }));
    const moved = this.follow(state, records, this.scope?.inspecting === true ? undefined : step);
    if (!moved.ok) return moved;
    this.proposed = { records, from: state, to: moved.value };
    return ok(records);
  }

  /**
   * The run's status once `records` are committed: the machine's, when they are the last proposal
   * (where it takes the run) or there are none; undefined for any others.
   */
  statusAfter(records: readonly RecordedEvent[]): RunStatus | undefined {
    if (records.length === 0) return this.folded.status;
    const p = this.proposed;
    return p !== null && p.records === records && p.from === this.folded ? p.to.status : undefined;
  }

  /** Moves the run by durable records: its own proposal, or history it loads or finds in the log. */
  commit(records: readonly RecordedEvent[]): void {
    const p = this.proposed;
    this.proposed = null;
    const moved =
      p !== null && p.records === records && p.from === this.folded
        ? ok(p.to)
        : this.follow(this.folded, records);
    // Durable records the machine does not take: a log this version did not write. Loading stops.
    if (!moved.ok) throw moved.error;
    this.folded = moved.value;
  }

  /**
   * The machine over `records` from state `s`: where they take the run, or the refusal. `step` is a
   * proposal's memo; without it, each event goes through the guard's scope (an observer sees it).
   */
  private follow(
    s: RunState,
    records: readonly RecordedEvent[],
    step?: (s: RunState, rec: RecordedEvent) => RunState | null,
  ): Result<RunState> {
    let state = s;
    for (const r of records) {
      const next = step === undefined ? stepRun(state, r, this.scope) : step(state, r);
      if (next === null)
        return err(
          new IllegalStateError(
            'illegal_transition',
            `run ${this.runId} is ${state.status}: its lifecycle does not take ${r.event.type} there`,
            { details: { status: state.status, event: r.event.type } },
          ),
        );
      state = next;
    }
    return ok(state);
  }
}
