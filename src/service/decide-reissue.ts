/**
 * A REISSUE, decided as the library's `run.reissue`: the note goes to the shared ledger, which
 * refuses it (reissue_refused) when the old key has no entry or is still in flight, or the new key
 * is in use. Like the library it records no run event: the note lives in the ledger (read back
 * with `reissuedFrom`), so a run's stream is the same whether its operator reissued through the
 * library or through the service, and no reader of the runs topic meets a new event type.
 */
import { IllegalStateError, type LoopguardError } from '../domain/index.js';
import type { RunActor } from '../machines/index.js';
import type { Ledger, ReissueNote } from '../ports/ledger.js';
import { ledgerCall } from '../runtime/claim-operation.js';
import { type DecideContext, refusal, unrecorded } from './decide-request.js';
import { reissueNote } from './request-command.js';
import type { WireDecision, WireRequest } from './service-topics.js';
import { ledgerUnavailable } from './shared-claims.js';

export async function decideReissue(
  ledger: Ledger,
  actor: RunActor,
  req: WireRequest,
  ctx: DecideContext,
  atMs: number,
): Promise<WireDecision> {
  const refuse = (e: LoopguardError): WireDecision => refusal(actor, req, ctx, atMs, e);
  const note = reissueNote(req, ctx.hashing);
  if (!note.ok) return refuse(note.error);
  // The note names its run: a run that never started has nothing to answer for.
  if (actor.state.status === 'NEW')
    return refuse(new IllegalStateError('run_not_started', `run ${req.run_id} has not been started`));
  let refused: LoopguardError;
  try {
    await ledgerCall(`reissue ${req.operation_key}`, () => ledger.reissue(note.value));
    return reissued(actor, req, ctx, atMs, note.value);
  } catch (e) {
    const err = ledgerUnavailable(e);
    if (err.code !== 'reissue_refused') return refuse(err);
    refused = err;
  }
  // The new key may be taken by this very request: decided before by a worker that is gone (its
  // answer was held in memory only), or written to the ledger by a batch that then aborted. Its
  // client gets the answer it was given, or would have been; anyone else's note is a refusal.
  let made: ReissueNote | undefined;
  try {
    made = await ledgerCall(`read the reissue of ${req.new_operation_key}`, () =>
      ledger.reissuedFrom(note.value.newKey),
    );
  } catch (e) {
    return refuse(ledgerUnavailable(e));
  }
  return made !== undefined && sameRequest(made, note.value)
    ? reissued(actor, req, ctx, atMs, made)
    : refuse(refused);
}

const sameRequest = (a: ReissueNote, b: ReissueNote): boolean =>
  a.by.runId === b.by.runId && a.by.callId === b.by.callId && a.oldKey === b.oldKey;

function reissued(
  actor: RunActor,
  req: WireRequest,
  ctx: DecideContext,
  atMs: number,
  note: ReissueNote,
): WireDecision {
  return {
    ...unrecorded(actor, req, ctx, atMs),
    decision: 'recorded',
    message: `operation ${note.oldKey} may run again as ${note.newKey}: ${note.reason}`,
    result_json: JSON.stringify(note),
  };
}
