/**
 * The pure fold of one operation key's ledger records, in partition order. The ledger topic
 * holds the ledger's own records and the event store's copies of each run's Operation* events;
 * both carry (runId, callId) as the owner, so a copy of a claim folds into the same claim.
 *
 * Rules: the first unreleased claim wins and later claims change nothing; a completion is final
 * (the side effect happened, whoever says so); in doubt and release apply only to the current
 * claim's owner, so a stale record of an earlier owner cannot free a key someone else holds.
 */
import type { RecordedEvent } from '../../domain/events.js';

export interface LedgerOwner {
  readonly runId: string;
  readonly callId: string;
}

export type KeyEntry =
  | { readonly status: 'claimed'; readonly owner: LedgerOwner; readonly atMs: number }
  | { readonly status: 'completed'; readonly owner: LedgerOwner; readonly resultJson: string }
  | { readonly status: 'in_doubt'; readonly owner: LedgerOwner; readonly reason: string };

export const sameOwner = (a: LedgerOwner, b: LedgerOwner): boolean =>
  a.runId === b.runId && a.callId === b.callId;

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

export function foldLedger(entry: KeyEntry | undefined, r: RecordedEvent): KeyEntry | undefined {
  const e = r.event;
  if (!('callId' in e) || e.callId === null) return entry;
  const owner = { runId: r.runId, callId: e.callId };
  const holds = entry !== undefined && entry.status !== 'completed' && sameOwner(entry.owner, owner);
  switch (e.type) {
    case 'OperationClaimed':
      return entry === undefined ? { status: 'claimed', owner, atMs: r.atMs } : entry;
    case 'OperationCompleted':
      return entry?.status === 'completed' ? entry : { status: 'completed', owner, resultJson: e.resultJson };
    case 'OperationInDoubt':
      return holds ? { status: 'in_doubt', owner, reason: e.reason } : entry;
    case 'OperationReleased':
      return holds ? undefined : entry;
    default:
      return entry;
  }
}
