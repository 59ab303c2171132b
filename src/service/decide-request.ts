/**
 * One request against one run's actor: the command goes through the same propose/commit protocol
 * as the library's, and the decision sent back is read off the recorded events (the guard's own
 * GuardDecided), so the service never decides anything the log does not say.
 */
import {
  type ErrorCode,
  type Hashing,
  isTerminal,
  type LedgerView,
  type LoopguardError,
  type Policy,
  type RecordedEvent,
  type RunState,
} from '../domain/index.js';
import type { RunActor } from '../machines/index.js';
import { cachedResultJson } from '../runtime/call-result.js';
import type { Settlement } from '../runtime/claim-operation.js';
import { requestCommand } from './request-command.js';
import type { RequestType, WireDecision, WireRequest } from './service-topics.js';

export interface Decided {
  /** The run's new events, seq after seq; empty when the request was refused. */
  readonly records: readonly RecordedEvent[];
  readonly decision: WireDecision;
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
}

export function decideRequest(
  actor: RunActor,
  req: WireRequest,
  ctx: DecideContext,
  atMs: number,
  /** What the shared ledger says about a side-effecting call's operation (see shared-claims.ts). */
  ledger?: LedgerView,
  /** A reconcile answer the ledger took for that operation: recorded before the call, as in the library. */
  settled?: Settlement | null,
): Decided {
  const cmd = requestCommand(req, ctx.policy, ctx.hashing);
  if (!cmd.ok) return { records: [], decision: refusal(actor, req, ctx, atMs, cmd.error) };
  const first: RecordedEvent[] = [];
  if (settled && cmd.value.type === 'RequestToolCall' && req.operation_key !== null) {
    const settle = actor.propose({
      type: 'SettleOperation',
      operationKey: req.operation_key,
      ...settled,
      settledBy: 'reconcile',
    });
    // The ledger is settled already: its record stays, whatever becomes of the call below.
    if (settle.ok) {
      actor.commit(settle.value);
      first.push(...settle.value);
    }
  }
  const input =
    ledger !== undefined && cmd.value.type === 'RequestToolCall' ? { ...cmd.value, ledger } : cmd.value;
  const proposed = actor.propose(input);
  if (!proposed.ok) return { records: first, decision: refusal(actor, req, ctx, atMs, proposed.error) };
  actor.commit(proposed.value);
  const records = [...first, ...proposed.value];
  return { records, decision: recordedDecision(req, records, actor.state, ctx.workerId) };
}

/**
 * The answer to a TOOL_CALL whose operation is in doubt, from a client that can reconcile it:
 * nothing is recorded (the run does not stop); the client asks its hook and sends the call again
 * with the answer in `reconciled`.
 */
export function reconcileAsked(
  actor: RunActor,
  req: WireRequest,
  ctx: DecideContext,
  atMs: number,
): WireDecision {
  return {
    ...unrecorded(actor, req, ctx, atMs),
    decision: 'reconcile',
    message: `operation ${req.operation_key} may or may not have happened; reconcile it and send the call again with the answer`,
  };
}

/** A decision that records nothing in the run, with the run as it stands: the fields left to fill are the answer's. */
export function unrecorded(
  actor: RunActor,
  req: WireRequest,
  ctx: DecideContext,
  atMs: number,
): Omit<WireDecision, 'decision' | 'message'> {
  return {
    request_id: req.request_id,
    run_id: req.run_id,
    worker: ctx.workerId,
    decided_at_ms: atMs,
    ...quiet,
    status: actor.state.status,
    seq: actor.state.seq,
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
    ...unrecorded(actor, req, ctx, atMs),
    decision: 'error',
    message: e.message,
    error_code: e.code,
    error_field: (e.details.field as string | undefined) ?? ERROR_FIELD[e.code] ?? null,
  };
}

/** The request a recorded batch answered, as its records' headers name it. */
export interface AnsweredRequest {
  readonly request_id: string;
  readonly run_id: string;
  readonly type: RequestType;
}

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
    request_id: req.request_id,
    run_id: req.run_id,
    worker: workerId,
    // The actor stamps every record of one request with one reading of its clock.
    decided_at_ms: records[0]?.atMs ?? s.lastAtMs,
    ...quiet,
    status: s.status,
    seq: s.seq,
    report_json: isTerminal(s.status) && s.report !== null ? JSON.stringify(s.report) : null,
  };
  const phase = req.type === 'TOOL_CALL' ? 'before' : req.type === 'TOOL_RESULT' ? 'after' : null;
  const d = phase === null ? undefined : decided(records, phase);
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

function decided(records: readonly RecordedEvent[], phase: 'before' | 'after') {
  for (const r of records) if (r.event.type === 'GuardDecided' && r.event.phase === phase) return r.event;
  return undefined;
}
