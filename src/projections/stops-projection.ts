import type { RecordedEvent, StopReport } from '../domain/index.js';

export interface StopEntry extends Pick<RecordedEvent, 'eventId' | 'runId' | 'atMs'> {
  readonly report: StopReport;
}

/** The stop reports, newest first (ties broken by event id, so the order never depends on timing). */
export class StopsProjection {
  private readonly stops: StopEntry[] = [];

  apply(rec: RecordedEvent): void {
    if (rec.event.type === 'RunStopped')
      this.stops.push({ eventId: rec.eventId, runId: rec.runId, atMs: rec.atMs, report: rec.event.report });
  }

  newestFirst(): StopEntry[] {
    return [...this.stops].sort(
      (a, b) => b.atMs - a.atMs || (a.eventId < b.eventId ? 1 : a.eventId > b.eventId ? -1 : 0),
    );
  }
}
