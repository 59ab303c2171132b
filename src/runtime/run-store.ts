import type { RecordedEvent } from '../domain/index.js';

/** The runtime's view of the event log: append durably, load one run's history. */
export interface RunStore {
  /** Resolves only when the records are durable; a rejection means nothing may act on them. */
  append(records: readonly RecordedEvent[]): Promise<void>;
  loadRun(runId: string): Promise<RecordedEvent[]>;
}
