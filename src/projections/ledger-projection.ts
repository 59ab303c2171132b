import {
  foldLedger,
  type KeyEntry,
  type OperationStatus,
  operationKeyOf,
  type RecordedEvent,
} from '../domain/index.js';

export interface LedgerEntry {
  readonly operationKey: string;
  readonly status: OperationStatus;
  readonly runId: string;
  readonly callId: string;
  readonly resultJson: string | null;
  readonly reason: string | null;
  readonly atMs: number;
}

/**
 * operation key -> claimed / completed (with the cached result) / in doubt, across all runs: the
 * Operation* events of every run folded by the ledger's one set of rules (domain/ledger-rules).
 */
export class LedgerProjection {
  private readonly entries = new Map<string, { entry: KeyEntry; atMs: number }>();

  apply(rec: RecordedEvent): void {
    const key = operationKeyOf(rec);
    if (key === null) return;
    const before = this.entries.get(key);
    const next = foldLedger(before?.entry, rec);
    if (next === undefined) this.entries.delete(key);
    else if (next !== before?.entry) this.entries.set(key, { entry: next, atMs: rec.atMs });
  }

  get(operationKey: string): LedgerEntry | undefined {
    const e = this.entries.get(operationKey);
    return e === undefined ? undefined : view(operationKey, e.entry, e.atMs);
  }

  snapshot(): Record<string, LedgerEntry> {
    return Object.fromEntries(
      [...this.entries]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([k, e]) => [k, view(k, e.entry, e.atMs)]),
    );
  }
}

function view(operationKey: string, e: KeyEntry, atMs: number): LedgerEntry {
  return {
    operationKey,
    status: e.status,
    runId: e.owner.runId,
    callId: e.owner.callId,
    resultJson: e.status === 'completed' ? e.resultJson : null,
    reason: e.status === 'in_doubt' ? e.reason : null,
    atMs,
  };
}
