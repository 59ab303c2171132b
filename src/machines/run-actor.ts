import { type Actor, createActor } from 'xstate';
import {
  type Command,
  type DeciderDeps,
  decide,
  type RecordedEvent,
  type Result,
  type RunState,
  type RunStatus,
} from '../domain/index.js';
import { runMachine } from './run-machine.js';

export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** A command as a caller gives it: the actor's clock stamps the time. */
export type CommandInput = DistributiveOmit<Command, 'atMs'>;

/**
 * A run's actor plus the two-step protocol that keeps "record first, then act": `propose` runs the
 * pure decider and returns the events with their envelopes, the caller makes them durable, and
 * only then `commit` moves the actor. A proposal that is never committed leaves no trace.
 */
export class RunActor {
  private readonly actor: Actor<typeof runMachine>;

  constructor(
    readonly runId: string,
    private readonly deps: DeciderDeps,
    private readonly clock: Clock,
    history: readonly RecordedEvent[] = [],
  ) {
    this.actor = createActor(runMachine, { input: { runId } });
    this.actor.start();
    if (history.length > 0) this.commit(history);
  }

  get state(): RunState {
    return this.actor.getSnapshot().context;
  }

  /** The machine's state value: RUNNING, WAITING or a terminal state (NEW before the start). */
  get status(): RunStatus {
    return this.actor.getSnapshot().value as RunStatus;
  }

  propose(input: CommandInput): Result<RecordedEvent[]> {
    const atMs = this.clock.now();
    const state = this.state;
    const decided = decide(state, { ...input, atMs } as Command, this.deps);
    if (!decided.ok) return decided;
    return {
      ok: true,
      value: decided.value.map((event, i) => ({
        eventId: `${this.runId}/${state.seq + i + 1}`,
        runId: this.runId,
        seq: state.seq + i + 1,
        atMs,
        event,
      })),
    };
  }

  commit(records: readonly RecordedEvent[]): void {
    this.actor.send({ type: 'apply', events: records });
  }

  stop(): void {
    this.actor.stop();
  }
}
