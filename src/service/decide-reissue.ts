/**
 * A REISSUE, decided as the library's `run.reissue`, through the same command path: the note goes
 * to the shared ledger, which refuses it (reissue_refused) when the old key has no entry or is
 * still in flight, or the new key is in use (unless by this very request, decided before by a
 * worker that is gone or in a batch that aborted). Like the library it records no run event: the
 * note lives in the ledger (read back with `reissuedFrom`), so a run's stream is the same whether
 * its operator reissued through the library or through the service, and no reader of the runs
 * topic meets a new event type.
 */
import { IllegalStateError, LoopguardError } from '../domain/index.js';
import type { RunActor } from '../machines/index.js';
import { reissueOperation } from '../runtime/command-path.js';
import { type DecideContext, refusal, unrecorded } from './decide-request.js';
import { reissueNote } from './request-command.js';
import type { WireDecision, WireRequest } from './service-topics.js';

export async function decideReissue(
  actor: RunActor,
  req: WireRequest,
  ctx: DecideContext,
  atMs: number,
): Promise<WireDecision> {
  const note = reissueNote(req, ctx.hashing);
  if (!note.ok) return refusal(actor, req, ctx, atMs, note.error);
  // The note names its run: a run that never started has nothing to answer for.
  if (actor.state.status === 'NEW')
    return refusal(
      actor,
      req,
      ctx,
      atMs,
      new IllegalStateError('run_not_started', `run ${req.run_id} has not been started`),
    );
  try {
    const made = await reissueOperation(ctx.ledger, note.value);
    return {
      ...unrecorded(actor, req, ctx, atMs),
      decision: 'recorded',
      message: `operation ${made.oldKey} may run again as ${made.newKey}: ${made.reason}`,
      result_json: JSON.stringify(made),
    };
  } catch (e) {
    if (!(e instanceof LoopguardError)) throw e;
    return refusal(actor, req, ctx, atMs, e);
  }
}
