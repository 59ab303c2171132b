import type { OperationStatus, RecordedEvent } from '../domain/index.js';

export interface LedgerEntry {
  readonly operationKey: string;
  readonly status: OperationStatus;
  readonly runId: string;
  readonly callId: string;
  readonly resultJson: string | null;
  readonly reason: string | null;
  readonly atMs: number;
}

/** operation key -> claimed / completed (with the cached result) / in doubt, across all runs. */
export class LedgerProjection {
  private readonly entries = new Map<string, LedgerEntry>();

  apply(rec: RecordedEvent): void {
    const e = rec.event;
    const put = (
      status: OperationStatus,
      resultJson: string | null,
      reason: string | null,
      key: string,
      callId: string,
    ) =>
      this.entries.set(key, {
        operationKey: key,
        status,
        runId: rec.runId,
        callId,
        resultJson,
        reason,
        atMs: rec.atMs,
      });
    switch (e.type) {
      case 'OperationClaimed':
        // A completion is final: a late or duplicate claim must not hide the cached result.
        if (this.entries.get(e.operationKey)?.status !== 'completed')
          put('claimed', null, null, e.operationKey, e.callId);
        break;
      case 'OperationCompleted':
        put('completed', e.resultJson, null, e.operationKey, e.callId);
        break;
      case 'OperationReleased':
        if (this.entries.get(e.operationKey)?.status !== 'completed') this.entries.delete(e.operationKey);
        break;
      case 'OperationInDoubt':
        if (this.entries.get(e.operationKey)?.status !== 'completed')
          put('in_doubt', null, e.reason, e.operationKey, e.callId);
        break;
    }
  }

  get(operationKey: string): LedgerEntry | undefined {
    return this.entries.get(operationKey);
  }

  snapshot(): Record<string, LedgerEntry> {
    return Object.fromEntries([...this.entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }
}
