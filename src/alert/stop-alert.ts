import type { RecordedEvent, StopReport, TerminalState } from '../domain/index.js';

/** What a receiver gets for one stopped run: stdout line and webhook body alike. */
export interface StopAlert {
  /** Unique per stop; the receiver dedupes on it (it is also the Idempotency-Key). */
  readonly event_id: string;
  readonly run_id: string;
  readonly terminal_state: TerminalState;
  readonly reason: string;
  readonly at_ms: number;
  readonly report: StopReport;
}

/** The alert for a RunStopped event; null for anything else (the stops topic holds only stops). */
export function toStopAlert(rec: RecordedEvent): StopAlert | null {
  if (rec.event.type !== 'RunStopped') return null;
  const report = rec.event.report;
  return {
    event_id: rec.eventId,
    run_id: rec.runId,
    terminal_state: report.terminalState,
    reason: report.guardReason,
    at_ms: rec.atMs,
    report,
  };
}
