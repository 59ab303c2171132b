import type { RecordedEvent } from '../domain/index.js';
import type { EventStore } from '../log/index.js';
import type { RunStore } from './run-store.js';

/**
 * The runtime's RunStore over the event store. Loading a run scans the runs topic: fine for a
 * resume now and then, not for a hot path (a per-run index is the fix if resumes get frequent).
 */
export function runStoreOf(events: EventStore): RunStore {
  return {
    append: (records) => events.append(records),
    async loadRun(runId: string): Promise<RecordedEvent[]> {
      const out: RecordedEvent[] = [];
      // A log may hold a batch twice (a producer retry whose first attempt did land, e.g. across a
      // broker restart); a run's events come in seq order, so a seq already seen is such a copy.
      for await (const e of events.readRuns(0))
        if (e.runId === runId && e.seq > (out.at(-1)?.seq ?? 0)) out.push(e);
      return out;
    },
  };
}
