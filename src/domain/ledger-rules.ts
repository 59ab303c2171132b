/**
 * The idempotency ledger's rules, written once for every ledger view (the embedded, memory and
 * Kafka ledgers, the ledger projection, a run's own RunState.operations).
 *
 * - The first claim wins: a claim on a key that has an entry changes nothing (even its holder's).
 * - A completion is final: nothing changes a completed key.
 * - Only the holder (the owner of the claimed or in-doubt entry) completes it, marks it in doubt
 *   or releases it; a stale record of an earlier owner cannot touch a key someone else holds.
 */
import type { DomainEvent, EventOf, RecordedEvent } from './events.js';

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

/** An Operation* event: a fact about one key of the ledger. */
export type OperationEvent = EventOf<
  'OperationClaimed' | 'OperationCompleted' | 'OperationInDoubt' | 'OperationReleased'
>;

export const isOperationEvent = (e: DomainEvent): e is OperationEvent =>
  e.type === 'OperationClaimed' ||
  e.type === 'OperationCompleted' ||
  e.type === 'OperationInDoubt' ||
  e.type === 'OperationReleased';

/** The fact an Operation* event records. */
export function ledgerFactOf(e: OperationEvent): LedgerFact {
  if (e.type === 'OperationCompleted') return { type: e.type, resultJson: e.resultJson };
  if (e.type === 'OperationInDoubt') return { type: e.type, reason: e.reason };
  return { type: e.type };
}

/** The operation key an Operation* event is about, or null for any other event. */
export function operationKeyOf(r: RecordedEvent): string | null {
  return isOperationEvent(r.event) ? r.event.operationKey : null;
}

/** Folds a recorded Operation* event (its run and call are the owner) into the key's entry. */
export function foldLedger(entry: KeyEntry | undefined, r: RecordedEvent): KeyEntry | undefined {
  const e = r.event;
  if (!isOperationEvent(e)) return entry;
  return applyLedgerFact(entry, ledgerFactOf(e), { runId: r.runId, callId: e.callId }, r.atMs).next;
}
