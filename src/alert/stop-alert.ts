import type { RecordedEvent, StopReport, TerminalState } from '../domain/index.js';
import { snakeKeys } from '../domain/snake-keys.js';

/** `fieldName` as `field_name`, the one casing of every JSON loopguard prints or posts. */
type Snake<S extends string> = S extends `${infer H}${infer T}`
  ? `${H extends Lowercase<H> ? H : `_${Lowercase<H>}`}${Snake<T>}`
  : S;

/** A library object with its field names in snake_case, as snakeKeys (domain/snake-keys.ts) writes it. */
type SnakeKeys<T> = T extends readonly (infer U)[]
  ? readonly SnakeKeys<U>[]
  : T extends object
    ? { readonly [K in keyof T as K extends string ? Snake<K> : K]: SnakeKeys<T[K]> }
    : T;

/** What a receiver gets for one stopped run: stdout line and webhook body alike. */
export interface StopAlert {
  /** Unique per stop; the receiver dedupes on it (it is also the Idempotency-Key). */
  readonly event_id: string;
  readonly run_id: string;
  readonly terminal_state: TerminalState;
  readonly reason: string;
  readonly at_ms: number;
  /** The stop report in snake_case, as `stops --json` and `replay --json` print reports. */
  readonly report: SnakeKeys<StopReport>;
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
    report: snakeKeys(report) as SnakeKeys<StopReport>,
  };
}
