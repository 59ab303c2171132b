/**
 * The library's durable boundary (command-path.ts): a run's stream, appended at the seq it is at;
 * only a durable append moves the actor.
 *
 * - Deferred events (a tool's result and the decision after it) are held and ride on the run's
 *   next write, one durable write per guarded call: nothing runs on them, and a side effect's
 *   outcome is already in the ledger.
 * - A write reported failed may land after all (a request that timed out, delivered later). If
 *   the next write's `conflict` finds exactly the lost batch, it is the run's own: the actor takes
 *   it, a call it decided to execute is recorded as never run (its caller was told nothing ran,
 *   and its claim was released), and the command is proposed again. Other conflicts pass on.
 */
import {
  failedResult,
  type Hashing,
  LoopguardError,
  type RecordedEvent,
  type RunStatus,
  UnavailableError,
} from '../domain/index.js';
import type { CommandInput, RunActor } from '../machines/index.js';
import type { RunStream } from '../ports/run-stream.js';
import { logRefused } from './call-request.js';
import type { DurableBoundary } from './command-path.js';

export class RunWriter implements DurableBoundary {
  /** Committed to the actor, not yet in the log. */
  private held: RecordedEvent[] = [];
  /** A write that failed but may still land. */
  private unconfirmed: readonly RecordedEvent[] | null = null;
  /** Set by close: nothing more is recorded (a dead process's late tool answer included). */
  private closed = false;
  /** Whether the last append wrote (a snapshot hint follows its commit), or held. */
  private wrote = false;

  constructor(
    private readonly actor: RunActor,
    private readonly store: RunStream,
    private readonly hashing: Hashing,
    /** Every record the actor took, held ones included (the guard's telemetry). */
    private readonly onRecorded: (records: readonly RecordedEvent[]) => void = () => undefined,
  ) {}

  get holding(): boolean {
    return this.held.length > 0;
  }

  async append(records: readonly RecordedEvent[], cmd: CommandInput, deferred: boolean): Promise<boolean> {
    if (this.closed) throw logRefused(cmd, new Error(`the guard of run ${this.actor.runId} is closed`));
    this.wrote = !deferred;
    if (deferred) {
      this.held.push(...records);
      return true;
    }
    const written = await this.write(
      [...this.held, ...records],
      (e) => this.refused(cmd, e),
      this.actor.statusAfter(records),
    );
    this.held = [];
    return written;
  }

  committed(records: readonly RecordedEvent[]): void {
    if (this.wrote) this.store.snapshot(this.actor.state);
    this.onRecorded(records);
  }

  /** Writes what is held, then records nothing more. */
  async close(): Promise<void> {
    try {
      await this.write(
        this.held,
        (e) =>
          new UnavailableError(
            'log_unavailable',
            `the event log did not accept the last result of run ${this.actor.runId}; resume the run (guard.resume) to settle it (${(e as Error).message})`,
            { cause: e },
          ),
        this.actor.status,
      );
      this.held = [];
      this.store.snapshot(this.actor.state);
    } finally {
      this.closed = true;
    }
  }

  /**
   * Appends at the seq of the first record; false when the run's own lost write was there instead.
   * `status`: the run's once they are in (the actor's; the held records are committed to it).
   */
  private async write(
    records: readonly RecordedEvent[],
    refused: (e: unknown) => LoopguardError,
    status: RunStatus | undefined,
  ): Promise<boolean> {
    const first = records[0];
    if (first === undefined) return true;
    try {
      await this.store.appendToStream(this.actor.runId, records, {
        expectedStreamVersion: first.seq - 1,
        status,
      });
      this.unconfirmed = null;
      return true;
    } catch (e) {
      if (e instanceof LoopguardError && e.code === 'conflict') {
        if (await this.adoptLanded()) return false;
        throw e;
      }
      this.unconfirmed = records;
      throw refused(e);
    }
  }

  /** The error for a write the log refused, naming a held result it carried (its tool did run). */
  private refused(cmd: CommandInput, e: unknown): LoopguardError {
    const held = this.held.find((r) => r.event.type === 'ToolCallCompleted')?.event;
    if (held === undefined || held.type !== 'ToolCallCompleted') return logRefused(cmd, e);
    return new UnavailableError(
      'log_unavailable',
      `the event log did not accept the result of call ${held.callId}: the tool ran but its result was not recorded; resume the run (guard.resume) to settle it. Nothing of this ${cmd.type} ran (${(e as Error).message})`,
      { cause: e },
    );
  }

  private async adoptLanded(): Promise<boolean> {
    const lost = this.unconfirmed;
    this.unconfirmed = null;
    const from = lost?.[0]?.seq;
    if (lost === null || from === undefined) return false;
    const landed = await this.store.readStream(this.actor.runId, from);
    if (landed.length < lost.length || lost.some((r, i) => landed[i]?.eventId !== r.eventId)) return false;
    this.actor.commit(landed.slice(0, lost.length).filter((r) => r.seq > this.actor.state.seq));
    const call = this.actor.state.inFlight;
    if (call === null) return true;
    const proposed = this.actor.propose({
      type: 'CompleteToolCall',
      callId: call.callId,
      kind: 'RETRYABLE',
      code: 'not_run',
      retryAfterMs: 0,
      ...failedResult('RETRYABLE', 'not_run', this.hashing),
    });
    if (!proposed.ok) throw proposed.error;
    await this.store.appendToStream(this.actor.runId, proposed.value, {
      expectedStreamVersion: this.actor.state.seq,
      status: this.actor.statusAfter(proposed.value),
    });
    this.actor.commit(proposed.value);
    return true;
  }
}
