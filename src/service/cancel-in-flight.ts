/**
 * A CANCEL is always possible. A run whose client lost a call's decision (a `decision_timeout`, a
 * crash) has that call in flight, and the decider refuses to end a run with a call in flight
 * (`call_in_flight`); a remote run would then be wedged for good. So the worker first closes the
 * call as the client would have: not run for an ordinary call (RETRYABLE `cancelled_in_flight`),
 * and, for a side effect, in doubt (nobody can say whether it happened: the run stops NEEDS_HUMAN
 * and the ledger's claim turns in doubt, for a person to settle), then cancels what is still live.
 * Both go through the one decider, recorded as one batch answering the CANCEL.
 */
import { isTerminal, type RecordedEvent } from '../domain/index.js';
import type { RunActor } from '../machines/index.js';
import { type DecideContext, type Decided, decideRequest, recordedDecision } from './decide-request.js';
import { emptyRequest, type WireRequest } from './service-topics.js';

/** The TOOL_RESULT that closes the run's call in flight, or null when it has none. */
export function closingResult(actor: RunActor, cancel: WireRequest): WireRequest | null {
  const call = actor.state.inFlight;
  if (cancel.type !== 'CANCEL' || call === null) return null;
  const doubt = call.sideEffect && call.operationKey !== null;
  return {
    ...emptyRequest(cancel.request_id, cancel.run_id, 'TOOL_RESULT', cancel.sent_at_ms),
    call_id: call.callId,
    result_kind: 'RETRYABLE',
    result_code: 'cancelled_in_flight',
    in_doubt: doubt,
  };
}

export function decideCancel(
  actor: RunActor,
  cancel: WireRequest,
  close: WireRequest,
  ctx: DecideContext,
  atMs: number,
): Decided & { readonly closed: readonly RecordedEvent[] } {
  const closed = decideRequest(actor, close, ctx, atMs);
  if (closed.decision.decision === 'error') return { ...closed, closed: [] };
  const rest = isTerminal(actor.state.status) ? [] : decideRequest(actor, cancel, ctx, atMs).records;
  const records = [...closed.records, ...rest];
  return {
    records,
    closed: closed.records,
    decision: recordedDecision(cancel, records, actor.state, ctx.workerId),
  };
}
