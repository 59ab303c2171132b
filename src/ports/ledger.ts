/**
 * The idempotency ledger in front of every side effect, shared by every worker and process that
 * runs tools: exactly one claimant of an operation key wins; the others learn it is done (and get
 * its result), in flight, or in doubt.
 */
import { sameOwner } from '../domain/ledger-rules.js';

export interface ClaimOwner {
  readonly runId: string;
  readonly callId: string;
}

export type ClaimOutcome =
  | { readonly status: 'won' }
  | { readonly status: 'completed'; readonly resultJson: string }
  | { readonly status: 'in_flight'; readonly owner: ClaimOwner }
  | { readonly status: 'in_doubt'; readonly owner: ClaimOwner };

export type LedgerState =
  | { readonly status: 'claimed'; readonly owner: ClaimOwner }
  | { readonly status: 'completed'; readonly owner: ClaimOwner; readonly resultJson: string }
  | { readonly status: 'in_doubt'; readonly owner: ClaimOwner; readonly reason: string };

/**
 * An operator's decision to run an operation a second time: a new key, with the reason and the
 * approver recorded. The old key's entry stays as it was, so its history is never rewritten.
 */
export interface ReissueNote {
  readonly oldKey: string;
  readonly newKey: string;
  readonly reason: string;
  readonly approvedBy: string | null;
  readonly by: ClaimOwner;
}

export interface Ledger {
  /** Atomically claims `key`; only a `won` claim may run the side effect. */
  claim(key: string, owner: ClaimOwner): Promise<ClaimOutcome>;
  /** The side effect happened; later claims get `completed` with this result. */
  complete(key: string, owner: ClaimOwner, resultJson: string): Promise<void>;
  /** The side effect may or may not have happened; nobody re-runs it blindly. */
  markInDoubt(key: string, owner: ClaimOwner, reason: string): Promise<void>;
  /** The claim was won but the side effect certainly did not run (the guard refused, or reconcile said so). */
  release(key: string, owner: ClaimOwner): Promise<void>;
  /**
   * An in-doubt operation settled by reconcile or a person: done (with its result) or free to run
   * again. `about`: the holder whose attempt the verdict is about (reconcile's), refused if another
   * holds the key now. Refused (`settle_refused`) while the claim is live; a no-op without an entry
   * or on a completion.
   */
  settle(key: string, happened: boolean, resultJson?: string, about?: ClaimOwner): Promise<void>;
  get(key: string): Promise<LedgerState | undefined>;
  /** Records a reissue; refused when the old key has no entry or the new key is already in use. */
  reissue(note: ReissueNote): Promise<void>;
  /** The reissue that made `newKey`, if it was made by one. */
  reissuedFrom(newKey: string): Promise<ReissueNote | undefined>;
  close(): Promise<void>;
}

/**
 * Why a settle is refused, or null, from the entry as its ledger reads it (a dead owner's or an
 * expired claim reads as in doubt). A live claim's side effect may be running right now: freeing
 * its key would let another claimant run it a second time, and "it happened" is not known yet.
 * A verdict `about` one holder's attempt says nothing of another's, which took the key since.
 * Nothing to settle (no entry, or a completion, which is final) is no refusal: the settle is a no-op.
 */
export function settleRefusal(
  key: string,
  state: LedgerState | undefined,
  about: ClaimOwner | undefined,
): string | null {
  if (state === undefined || state.status === 'completed') return null;
  const holder = `${state.owner.runId}/${state.owner.callId}`;
  if (state.status === 'claimed')
    return `operation ${key} is in flight (${holder}); only an in-doubt operation is settled`;
  if (about !== undefined && !sameOwner(about, state.owner))
    return `operation ${key} is now held by ${holder}, not by ${about.runId}/${about.callId} the verdict is about`;
  return null;
}

/** Why a reissue is refused, or null: shared by the adapters so they refuse alike. */
export function reissueRefusal(
  note: ReissueNote,
  old: LedgerState | undefined,
  taken: LedgerState | ReissueNote | undefined,
): string | null {
  if (note.reason.trim() === '') return 'a reissue needs a recorded reason';
  if (note.oldKey === note.newKey) return 'the new operation key must differ from the old one';
  if (old === undefined) return `operation ${note.oldKey} is not in the ledger; there is nothing to reissue`;
  if (old.status === 'claimed') return `operation ${note.oldKey} is still in flight; wait for its outcome`;
  if (taken !== undefined) return `operation key ${note.newKey} is already in use`;
  return null;
}
