/**
 * One request against one run's actor, through the library's command path (command-path.ts):
 * the same claims, decisions and ledger outcomes as the matching library call. The durable
 * boundary is the batch's transaction: the records are collected here for it, and the actor they
 * move is the batch's copy of the run. The decision sent back is read off the recorded events
 * (the guard's own GuardDecided), so the service never decides anything the log does not say.
 */
import {
  type ErrorCode,
  type Hashing,
  IllegalStateError,
  isTerminal,
  LoopguardError,
  type Policy,
  type RecordedEvent,
  type RunState,
} from '../domain/index.js';
import type { RunActor } from '../machines/index.js';
import type { Ledger } from '../ports/ledger.js';
import type { CallHooks } from '../runtime/call-request.js';
import { cachedResultJson, decidedIn } from '../runtime/call-result.js';
import { CommandPath, reissueOperation } from '../runtime/command-path.js';
import { reissueNote, requestCommand } from './request-command.js';
import type { WireDecision, WireRequest } from './service-topics.js';

export interface Decided {
  /** The run's new events, seq after seq; empty when the request was refused before any. */
  readonly records: readonly RecordedEvent[];
  readonly decision: WireDecision;
  /** Claims given back (a call that does not run): only once the batch's transaction commits. */
  readonly afterCommit?: readonly (() => Promise<unknown>)[];
}

/** Which request field a domain error is about, so a client can tell what to fix. */
const ERROR_FIELD: Readonly<Partial<Record<ErrorCode, string>>> = {
  unknown_call: 'call_id',
  run_exists: 'run_id',
  run_not_started: 'run_id',
};

/** What a worker decides with: its policy, its secret-hashing key, its name in the decisions. */
export interface DecideContext {
  readonly policy: Policy;
  readonly hashing: Hashing;
  readonly workerId: string;
  /** The shared ledger of side effects, across runs and processes. */
  readonly ledger: Ledger;
}

/** The client can settle an in-doubt operation with its own hook: it is asked to, nothing is recorded. */
class ReconcileAsked extends Error {}

/**
 * The client's reconcile hook as the command path asks it: the answer the TOOL_CALL carries (sent
 * after a `reconcile` decision); else, when the client has a hook (`can_reconcile`), the request
 * is answered `reconcile`: the worker cannot call the client's hook itself.
 */
function reconcileHook(req: WireRequest): CallHooks {
  const happened = req.reconciled;
  if (happened === null)
    return req.can_reconcile === true
      ? {
          reconcile: () => {
            throw new ReconcileAsked();
          },
        }
      : {};
  // requestCommand refused text that is no JSON before this is asked.
  return { reconcile: async () => ({ happened, result: JSON.parse(req.result_json ?? 'null') }) };
}

export async function decideRequest(
  actor: RunActor,
  req: WireRequest,
  ctx: DecideContext,
  atMs: number,
): Promise<Decided> {
  if (req.type === 'REISSUE') return { records: [], decision: await decideReissue(actor, req, ctx, atMs) };
  const cmd = requestCommand(req, ctx.policy, ctx.hashing);
  if (!cmd.ok) return { records: [], decision: refusal(actor, req, ctx, atMs, cmd.error) };
  const records: RecordedEvent[] = [];
  const afterCommit: (() => Promise<unknown>)[] = [];
  const path = new CommandPath({
    actor,
    ledger: ctx.ledger,
    hashing: ctx.hashing,
    // The batch's transaction is the boundary: what the request records joins it.
    boundary: {
      append: async (proposed) => {
        records.push(...proposed);
        return true;
      },
      afterCommit: (work) => afterCommit.push(work),
    },
    withdrawOrphans: false,
  });
  try {
    await path.handle(cmd.value, reconcileHook(req));
  } catch (e) {
    if (e instanceof ReconcileAsked) {
      // Nothing is recorded (the run does not stop): the client asks its hook and sends the call
      // again with the answer in `reconciled`.
      const message = `operation ${req.operation_key} may or may not have happened; reconcile it and send the call again with the answer`;
      const decision = { ...answerTo(req, ctx.workerId, atMs, actor.state), decision: 'reconcile', message };
      return { records, decision, afterCommit };
    }
    if (!(e instanceof LoopguardError)) throw e;
    // Fail closed: a ledger that does not answer runs no side effect. What was recorded before
    // (a reconcile's settlement) stays: the ledger has it already.
    return { records, decision: refusal(actor, req, ctx, atMs, e), afterCommit };
  }
  return { records, decision: recordedDecision(req, records, actor.state, ctx.workerId), afterCommit };
}

/**
 * A REISSUE, decided as the library's `run.reissue` (reissueOperation): the note goes to the shared
 * ledger, which may refuse it (reissue_refused), and, as in the library, no run event is recorded,
 * so a run's stream is the same whichever way its operator reissued.
 */
async function decideReissue(
  actor: RunActor,
  req: WireRequest,
  ctx: DecideContext,
  atMs: number,
): Promise<WireDecision> {
  try {
    const note = reissueNote(req, ctx.hashing);
    if (!note.ok) throw note.error;
    // The note names its run: a run that never started has nothing to answer for.
    if (actor.state.status === 'NEW')
      throw new IllegalStateError('run_not_started', `run ${req.run_id} has not been started`);
    const made = await reissueOperation(ctx.ledger, note.value);
    return {
      ...answerTo(req, ctx.workerId, atMs, actor.state),
      decision: 'recorded',
      message: `operation ${made.oldKey} may run again as ${made.newKey}: ${made.reason}`,
      result_json: JSON.stringify(made),
    };
  } catch (e) {
    if (!(e instanceof LoopguardError)) throw e;
    return refusal(actor, req, ctx, atMs, e);
  }
}

/** A decision to `req` with its run at `run`: every field null but the answer's, left to fill. */
export function answerTo(
  req: Pick<WireRequest, 'request_id' | 'run_id'>,
  workerId: string,
  atMs: number,
  run: { readonly status: string; readonly seq: number },
): Omit<WireDecision, 'decision' | 'message'> {
  return {
    ...quiet,
    request_id: req.request_id,
    run_id: req.run_id,
    worker: workerId,
    decided_at_ms: atMs,
    status: run.status,
    seq: run.seq,
  };
}

/** An error decision: the request was refused and recorded nothing. */
export function refusal(
  actor: RunActor,
  req: WireRequest,
  ctx: DecideContext,
  atMs: number,
  e: LoopguardError,
): WireDecision {
  return {
    ...answerTo(req, ctx.workerId, atMs, actor.state),
    decision: 'error',
    message: e.message,
    error_code: e.code,
    error_field: (e.details.field as string | undefined) ?? ERROR_FIELD[e.code] ?? null,
  };
}

/** The request a recorded batch answered, as its records' headers name it. */
export type AnsweredRequest = Pick<WireRequest, 'request_id' | 'run_id' | 'type'>;

/**
 * The decision a request got, read off the events it recorded and the run's state right after
 * them: the same for the worker that decided it and for any worker that folds the log later, so
 * a repeated request id is answered alike before and after a failover.
 */
export function recordedDecision(
  req: AnsweredRequest,
  records: readonly RecordedEvent[],
  s: RunState,
  workerId: string,
): WireDecision {
  const after = {
    // The actor stamps every record of one request with one reading of its clock.
    ...answerTo(req, workerId, records[0]?.atMs ?? s.lastAtMs, s),
    report_json: isTerminal(s.status) && s.report !== null ? JSON.stringify(s.report) : null,
  };
  const phase = req.type === 'TOOL_CALL' ? 'before' : req.type === 'TOOL_RESULT' ? 'after' : null;
  const d = phase === null ? undefined : decidedIn(records, phase);
  if (d === undefined) {
    const warnings = records.flatMap((r) => (r.event.type === 'BudgetWarning' ? [r.event.message] : []));
    const checkpoint = records.find((r) => r.event.type === 'CheckpointRecorded')?.event;
    return {
      ...after,
      decision: 'recorded',
      message: `run is ${s.status}`,
      // A model's usage can cross a budget's warning mark: the client hears it as with a tool's result.
      warning: warnings.length > 0 ? warnings.join('; ') : null,
      checkpoint_id: checkpoint?.type === 'CheckpointRecorded' ? checkpoint.checkpointId : null,
    };
  }
  return {
    ...after,
    decision: d.decision,
    rule: d.rule,
    message: d.message,
    warning: d.warning,
    wait_until_ms: d.waitUntilMs,
    evidence_json: JSON.stringify(d.evidence),
    result_json: d.decision === 'return_cached_success' ? cachedResultJson(d, records, s) : null,
  };
}

const quiet = {
  rule: null,
  warning: null,
  wait_until_ms: null,
  evidence_json: null,
  result_json: null,
  report_json: null,
  error_code: null,
  error_field: null,
  checkpoint_id: null,
};
