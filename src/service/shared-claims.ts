/**
 * Side effects across runs, as in the library: before a side-effecting call is decided, the
 * worker claims its operation key in the shared ledger, so another run asking for the same
 * operation gets the first one's result (return_cached_success), or waits while it is in flight.
 * Claims are made outside the batch's transaction: a batch that aborts leaves a claim its run
 * never recorded, which claimOperation withdraws when the request is decided again.
 */
import {
  callIsSideEffect,
  canonicalCall,
  type Hashing,
  isTerminal,
  type LedgerView,
  LoopguardError,
  nameProblem,
  type RecordedEvent,
  redactText,
  UnavailableError,
} from '../domain/index.js';
import type { RunActor } from '../machines/index.js';
import type { ClaimOwner, Ledger } from '../ports/ledger.js';
import { type CallHooks, recordedResult } from '../runtime/call-request.js';
import { claimOperation, type Settlement } from '../runtime/claim-operation.js';
import type { WireRequest } from './service-topics.js';

export interface SharedClaim {
  readonly view: LedgerView;
  readonly key: string;
  readonly owner: ClaimOwner;
  readonly won: boolean;
  /** The client's reconcile answer on an in-doubt key, settled in the ledger: the run records it first. */
  readonly settled: Settlement | null;
}

/**
 * The client's reconcile hook as claimOperation asks it: the answer the TOOL_CALL carries (sent
 * after a `reconcile` decision), or none. The worker cannot call the client's hook itself.
 */
function reconcileHook(req: WireRequest): CallHooks {
  const happened = req.reconciled;
  if (happened === null) return {};
  let result: unknown = null;
  try {
    result = JSON.parse(req.result_json ?? 'null');
  } catch {
    // requestCommand refuses the request by its field; nothing is settled on text that is no JSON.
    return {};
  }
  return { reconcile: async () => ({ happened, result }) };
}

/**
 * The ledger's word on a TOOL_CALL's operation, or null when it has none to ask about (no key,
 * no side effect, an ended run, or a key, tool or arguments the decider will refuse anyway: those
 * must not take a shared claim first). A ledger that does not answer is an error: nothing runs.
 */
export async function claimBefore(
  ledger: Ledger,
  actor: RunActor,
  req: WireRequest,
  hashing: Hashing,
): Promise<SharedClaim | null> {
  const policy = actor.state.policy;
  if (req.type !== 'TOOL_CALL' || req.operation_key === null || req.tool === null || policy === null)
    return null;
  if (isTerminal(actor.state.status)) return null;
  if (nameProblem(req.operation_key) !== null || nameProblem(req.tool) !== null) return null;
  if (!callIsSideEffect(policy, req.tool, req.side_effect, req.operation_key)) return null;
  let args: unknown;
  try {
    args = JSON.parse(req.args_json ?? '{}');
  } catch {
    return null;
  }
  if (!canonicalCall(req.tool, args, hashing).ok) return null;
  // Keys are held redacted, in the ledger as in the run's own records.
  const key = redactText(req.operation_key, hashing);
  const owner = { runId: req.run_id, callId: req.request_id };
  const asked = { key, asked: req.operation_key };
  const recorded = Object.hasOwn(actor.state.operations, key);
  const claim = await claimOperation(ledger, asked, owner, reconcileHook(req), recorded, (v) =>
    recordedResult(v, hashing),
  );
  return { view: claim.view, key, owner, won: claim.won, settled: claim.settled };
}

/**
 * Whether the worker asks the client to reconcile instead of deciding: the call's operation is in
 * doubt, the client has a hook (`can_reconcile`), and this request does not carry its answer yet.
 */
export const asksReconcile = (claim: SharedClaim | null, req: WireRequest): boolean =>
  claim?.view.status === 'in_doubt' && req.can_reconcile === true && req.reconciled === null;

/** A won claim whose call was not let run is given back: the side effect certainly did not happen. */
export async function releaseUnused(
  ledger: Ledger,
  claim: SharedClaim | null,
  decision: string,
): Promise<void> {
  if (claim?.won && decision !== 'execute') await ledger.release(claim.key, claim.owner);
}

/**
 * The ledger learns an operation's outcome from the events a TOOL_RESULT (or a person's SETTLE)
 * recorded, before the batch commits them: another run must never see a completed side effect as
 * free. If the ledger cannot take it, the claim stays (and turns in doubt), and the run's record
 * still carries the outcome, which the copy projector copies to the ledger topic after the commit.
 */
export async function reportOutcome(
  ledger: Ledger,
  req: WireRequest,
  records: readonly RecordedEvent[],
): Promise<void> {
  if (req.type !== 'TOOL_RESULT' && req.type !== 'SETTLE') return;
  const settling = req.type === 'SETTLE';
  for (const { event: e } of records) {
    if (e.type !== 'OperationCompleted' && e.type !== 'OperationInDoubt' && e.type !== 'OperationReleased')
      continue;
    const owner = { runId: req.run_id, callId: e.callId };
    const done =
      e.type === 'OperationCompleted'
        ? settling
          ? ledger.settle(e.operationKey, true, e.resultJson)
          : ledger.complete(e.operationKey, owner, e.resultJson)
        : e.type === 'OperationInDoubt'
          ? ledger.markInDoubt(e.operationKey, owner, e.reason)
          : settling
            ? ledger.settle(e.operationKey, false)
            : ledger.release(e.operationKey, owner);
    await done.catch(() => undefined);
  }
}

export const ledgerUnavailable = (e: unknown): LoopguardError =>
  e instanceof LoopguardError ? e : new UnavailableError('log_unavailable', (e as Error).message);
