/**
 * The idempotency ledger's rules, written once. Every ledger view folds Operation* events with
 * them: the file and Kafka ledgers (which also answer callers, so a refusal becomes an error),
 * the ledger projection over all runs, and a run's own RunState.operations.
 *
 * - The first claim wins: a claim on a key that has an entry changes nothing (even its holder's).
 * - A completion is final: nothing changes a completed key.
 * - Only the holder (the owner of the claimed or in-doubt entry) completes it, marks it in doubt
 *   or releases it; a stale record of an earlier owner cannot touch a key someone else holds.
 */
import type { RecordedEvent } from './events.js';

export interface LedgerOwner {
  readonly runId: string;
  readonly callId: string;
}

export type KeyEntry =
  | { readonly status: 'claimed'; readonly owner: LedgerOwner; readonly atMs: number }
  | { readonly status: 'completed'; readonly owner: LedgerOwner; readonly resultJson: string }
  | { readonly status: 'in_doubt'; readonly owner: LedgerOwner; readonly reason: string };

export type LedgerFact =
  | { readonly type: 'OperationClaimed' }
  | { readonly type: 'OperationCompleted'; readonly resultJson: string }
  | { readonly type: 'OperationInDoubt'; readonly reason: string }
  | { readonly type: 'OperationReleased' };

export interface LedgerStep {
  readonly next: KeyEntry | undefined;
  /** Why the fact changed nothing; null when it applied. */
  readonly refused: string | null;
}

export const sameOwner = (a: LedgerOwner, b: LedgerOwner): boolean =>
  a.runId === b.runId && a.callId === b.callId;

/** Why `owner` may not complete, mark in doubt or release the key; null when it holds it. */
export function holderRefusal(
  entry: { readonly status: string; readonly owner: LedgerOwner } | undefined,
  owner: LedgerOwner,
): string | null {
  if (entry?.status === 'completed') return 'completed: a completion is final';
  if (entry === undefined || !sameOwner(entry.owner, owner))
    return `not held by ${owner.runId}/${owner.callId}`;
  return null;
}

/** One fact about one key, by `owner` at `atMs`: the entry after it, or why it changed nothing. */
export function applyLedgerFact(
  entry: KeyEntry | undefined,
  fact: LedgerFact,
  owner: LedgerOwner,
  atMs: number,
): LedgerStep {
  if (fact.type === 'OperationClaimed')
    return entry === undefined
      ? { next: { status: 'claimed', owner, atMs }, refused: null }
      : { next: entry, refused: `taken: ${entry.status} by ${entry.owner.runId}/${entry.owner.callId}` };
  const refused = holderRefusal(entry, owner);
  if (refused !== null) return { next: entry, refused };
  switch (fact.type) {
    case 'OperationCompleted':
      return { next: { status: 'completed', owner, resultJson: fact.resultJson }, refused: null };
    case 'OperationInDoubt':
      return { next: { status: 'in_doubt', owner, reason: fact.reason }, refused: null };
    case 'OperationReleased':
      return { next: undefined, refused: null };
  }
}

/** The operation key an Operation* event is about, or null for any other event. */
export function operationKeyOf(r: RecordedEvent): string | null {
  const e = r.event;
  switch (e.type) {
    case 'OperationClaimed':
    case 'OperationCompleted':
    case 'OperationInDoubt':
    case 'OperationReleased':
      return e.operationKey;
    default:
      return null;
  }
}

/** Folds a recorded Operation* event (its run and call are the owner) into the key's entry. */
export function foldLedger(entry: KeyEntry | undefined, r: RecordedEvent): KeyEntry | undefined {
  const e = r.event;
  const owner = 'callId' in e && e.callId !== null ? { runId: r.runId, callId: e.callId } : null;
  if (owner === null) return entry;
  switch (e.type) {
    case 'OperationClaimed':
    case 'OperationReleased':
      return applyLedgerFact(entry, { type: e.type }, owner, r.atMs).next;
    case 'OperationCompleted':
      return applyLedgerFact(entry, { type: e.type, resultJson: e.resultJson }, owner, r.atMs).next;
    case 'OperationInDoubt':
      return applyLedgerFact(entry, { type: e.type, reason: e.reason }, owner, r.atMs).next;
    default:
      return entry;
  }
}
