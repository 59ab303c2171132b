/**
 * The one command path of a run (claim -> decide -> append -> commit), for the library
 * (GuardedRun) and the service (the guard worker) alike. They differ only in their durable
 * boundary: the library's is the run's stream (RunWriter), the service's the batch's Kafka
 * transaction (the actor it moves is the batch's copy of the run until the transaction commits).
 */
import {
  callIsSideEffect,
  canonicalCall,
  type EventOf,
  type Hashing,
  IllegalStateError,
  isTerminal,
  type LedgerView,
  LoopguardError,
  own,
  type RecordedEvent,
  redactText,
  resultHash,
  sameOwner,
} from '../domain/index.js';
import type { CommandInput, RunActor } from '../machines/index.js';
import type { ClaimOwner, Ledger, ReissueNote } from '../ports/ledger.js';
import { type CallHooks, recordedResult } from './call-request.js';
import { decision } from './call-result.js';
import { claimOperation, ledgerCall, type OperationClaim } from './claim-operation.js';
import type { LateEffects } from './late-effects.js';

type Input<T extends CommandInput['type']> = Extract<CommandInput, { type: T }>;

/** Where a proposal becomes durable: the library's stream, the service's batch transaction. */
export interface DurableBoundary {
  /**
   * Takes `records` (the actor's proposal for `cmd`) into the boundary. `deferred`: they may wait
   * for the run's next write (nothing acts on them). False when the stream held the run's own
   * lost write instead, which the boundary gave the actor: the command is proposed again on it.
   */
  append(records: readonly RecordedEvent[], cmd: CommandInput, deferred: boolean): Promise<boolean>;
  /** The actor took `records`. */
  committed?(records: readonly RecordedEvent[]): void;
  /**
   * Runs `work` once what was appended is committed, and never if it is not. Where the boundary
   * commits later than it appends (the worker's batch transaction), a claim is given back only
   * then: a worker fenced mid-batch decided on a run its successor holds, under the same claim
   * owner, and its release would free the key of a call the successor let run. Without it, now.
   */
  afterCommit?(work: () => Promise<unknown>): void;
}

export interface CommandPathDeps {
  readonly actor: RunActor;
  readonly boundary: DurableBoundary;
  /** The shared ledger of side effects, across runs and processes. */
  readonly ledger: Ledger;
  readonly hashing: Hashing;
  /** What the caller adds to every command (the library: the run's family). */
  readonly withContext?: (cmd: CommandInput) => CommandInput;
  /** Side effects past their timeout still running in this process (the library's; late-effects.ts). */
  readonly late?: LateEffects;
  /**
   * Whether a claim of this run that its log never recorded is withdrawn and taken again (the
   * library: calls of a run go one at a time in one process). A worker does not: its view of the
   * run may be stale (fenced mid-batch), so such a claim may be its successor's, running now.
   */
  readonly withdrawOrphans?: boolean;
}

/** A call's decision before it runs, with every record the request made (a reconcile's settlement first). */
export interface RequestedCall {
  readonly records: readonly RecordedEvent[];
  readonly before: EventOf<'GuardDecided'>;
}

const NO_CLAIM: OperationClaim = { view: { status: 'none' } as LedgerView, won: false, settled: null };

export class CommandPath {
  constructor(private readonly d: CommandPathDeps) {}

  /**
   * Decide -> append -> commit. `report` (a tool's result) runs between the decision and the
   * append (the ledger learns a side effect's outcome before the run's record of it); it says
   * whether the outcome is safe somewhere, which lets the record wait for the run's next write.
   */
  async record(
    cmd: CommandInput,
    report?: (records: readonly RecordedEvent[]) => Promise<boolean>,
  ): Promise<RecordedEvent[]> {
    const { actor, boundary } = this.d;
    const input = this.d.withContext?.(cmd) ?? cmd;
    for (;;) {
      const proposed = actor.propose(input);
      if (!proposed.ok) throw proposed.error;
      const records = proposed.value;
      const covered = report !== undefined && (await report(records));
      // A stop is never held: alerting must see it at once.
      const hold = covered && !records.some((r) => r.event.type === 'RunStopped');
      if (!(await boundary.append(records, cmd, hold))) continue;
      actor.commit(records);
      boundary.committed?.(records);
      return records;
    }
  }

  /** Any command by its type (the service's requests). */
  handle(cmd: CommandInput, hooks: CallHooks = {}): Promise<readonly RecordedEvent[]> {
    switch (cmd.type) {
      case 'RequestToolCall':
        return this.requestCall(cmd, hooks).then((c) => c.records);
      case 'CompleteToolCall':
        return this.completeCall(cmd);
      case 'SettleOperation':
        return this.settle(cmd);
      case 'Cancel':
        return this.cancel(cmd);
      default:
        return this.record(cmd);
    }
  }

  /**
   * A tool call before it runs: a side effect's operation key is claimed in the shared ledger
   * first (an in-doubt one reconciled through `hooks`, the answer recorded before the call), then
   * the call is decided on what the ledger said. A won claim whose call may not run is given back.
   */
  async requestCall(cmd: Input<'RequestToolCall'>, hooks: CallHooks = {}): Promise<RequestedCall> {
    const { actor, ledger, hashing } = this.d;
    const policy = actor.state.policy;
    if (policy === null)
      throw new IllegalStateError('run_not_started', `run ${actor.runId} has not been started`);
    const side = callIsSideEffect(policy, cmd.tool, cmd.sideEffect, cmd.operationKey);
    const asked = side && !isTerminal(actor.state.status) ? cmd.operationKey : undefined;
    // Keys are held redacted, in the ledger as in the run's own records.
    const key = asked === undefined ? undefined : redactText(asked, hashing);
    // Arguments that can never be recorded must not take a shared claim first (the decider refuses them too).
    if (key !== undefined) {
      const args = canonicalCall(cmd.tool, cmd.args, hashing);
      if (!args.ok) throw args.error;
    }
    const owner: ClaimOwner = { runId: actor.runId, callId: cmd.callId };
    const claim =
      asked === undefined || key === undefined
        ? NO_CLAIM
        : await claimOperation(
            ledger,
            { key, asked },
            owner,
            hooks,
            Object.hasOwn(actor.state.operations, key),
            (v) => recordedResult(v, hashing),
            { late: this.d.late, withdrawOrphans: this.d.withdrawOrphans },
          );
    const settled =
      key !== undefined && claim.settled !== null
        ? await this.record({
            type: 'SettleOperation',
            operationKey: key,
            ...claim.settled,
            settledBy: 'reconcile',
          })
        : [];
    const release = async () => {
      if (!claim.won || key === undefined) return;
      const giveBack = () => ledger.release(key, owner).catch(() => undefined);
      if (this.d.boundary.afterCommit !== undefined) this.d.boundary.afterCommit(giveBack);
      else await giveBack();
    };
    let records: RecordedEvent[];
    try {
      records = await this.record({ ...cmd, ledger: claim.view });
    } catch (e) {
      await release();
      throw e;
    }
    const before = decision(records, 'before');
    // Not run: certainly did not happen. A release the ledger misses leaves a claim this run never
    // recorded, which its next claim of the key withdraws (claimOperation).
    if (before.decision !== 'execute') await release();
    return { records: [...settled, ...records], before };
  }

  /**
   * A tool's result. The ledger learns a side effect's outcome before the run does: another run
   * must never see a completed side effect as free. If the ledger cannot take it, the claim stays
   * (and turns in doubt), and the run's own record still carries the outcome to the log; the
   * record may wait for the run's next write only when the ledger has the outcome.
   */
  completeCall(cmd: Input<'CompleteToolCall'>): Promise<RecordedEvent[]> {
    const call = this.d.actor.state.inFlight;
    const sideEffect = call !== null && call.callId === cmd.callId && call.sideEffect;
    return this.record(cmd, async (records) => {
      const outcomes = records.flatMap(({ event: e }) =>
        e.type === 'OperationCompleted' || e.type === 'OperationInDoubt' || e.type === 'OperationReleased'
          ? [e]
          : [],
      );
      if (outcomes.length === 0) return !sideEffect;
      const told = await Promise.allSettled(outcomes.map((e) => this.tell(e)));
      return told.every((t) => t.status === 'fulfilled');
    });
  }

  private tell(e: EventOf<'OperationCompleted' | 'OperationInDoubt' | 'OperationReleased'>): Promise<void> {
    const { ledger, actor } = this.d;
    const owner = { runId: actor.runId, callId: e.callId };
    if (e.type === 'OperationCompleted') return ledger.complete(e.operationKey, owner, e.resultJson);
    if (e.type === 'OperationInDoubt') return ledger.markInDoubt(e.operationKey, owner, e.reason);
    return ledger.release(e.operationKey, owner);
  }

  /**
   * A person's (or reconcile's) verdict on an in-doubt operation: the shared ledger is settled
   * first (other runs read it), then the run records it. A ledger that does not answer: nothing.
   */
  async settle(cmd: Input<'SettleOperation'>): Promise<RecordedEvent[]> {
    const key = redactText(cmd.operationKey, this.d.hashing);
    // On this run's own open entry the verdict is about this run's attempt, not one another run
    // made since; a key this run never held is settled as the ledger holds it.
    const { actor } = this.d;
    const mine = own(actor.state.operations, key);
    const about =
      mine === undefined || mine.status === 'completed'
        ? undefined
        : { runId: actor.runId, callId: mine.callId };
    await ledgerCall(`settle ${cmd.operationKey}`, () =>
      this.d.ledger.settle(key, cmd.happened, cmd.resultJson, about),
    );
    return this.record(cmd);
  }

  /**
   * A cancel is always possible. A call still in flight (its caller lost the decision, or died)
   * is closed first as its caller would have: not run for an ordinary call (RETRYABLE
   * `cancelled_in_flight`), in doubt for a side effect (nobody can say whether it happened: the
   * run stops NEEDS_HUMAN and the ledger's claim turns in doubt); then what is still live ends.
   */
  async cancel(cmd: Input<'Cancel'>): Promise<RecordedEvent[]> {
    const { actor, hashing } = this.d;
    const call = actor.state.inFlight;
    const closed =
      call === null
        ? []
        : await this.completeCall({
            type: 'CompleteToolCall',
            callId: call.callId,
            kind: 'RETRYABLE',
            resultJson: 'null',
            resultHash: resultHash('RETRYABLE', 'cancelled_in_flight', 'null', hashing),
            code: 'cancelled_in_flight',
            inDoubt: call.sideEffect,
          });
    if (isTerminal(actor.state.status)) return closed;
    return [...closed, ...(await this.record(cmd))];
  }
}

/**
 * A deliberate second execution, the ledger's alone (no run event), for both callers. A refusal
 * because the new key is taken may be this very note, made before by a caller that lost the
 * answer (a worker that is gone, a batch that aborted): then it is the answer.
 */
export async function reissueOperation(ledger: Ledger, note: ReissueNote): Promise<ReissueNote> {
  try {
    await ledgerCall(`reissue ${note.oldKey}`, () => ledger.reissue(note));
    return note;
  } catch (e) {
    if (!(e instanceof LoopguardError) || e.code !== 'reissue_refused') throw e;
    const made = await ledgerCall(`read the reissue of ${note.newKey}`, () =>
      ledger.reissuedFrom(note.newKey),
    );
    if (made === undefined || !sameOwner(made.by, note.by) || made.oldKey !== note.oldKey) throw e;
    return made;
  }
}
