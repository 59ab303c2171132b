import type { RecordedEvent } from '../domain/index.js';
import type { StopAlert } from './stop-alert.js';

/** What a receiver gets when many runs loop the same way: stdout line and webhook body alike. */
export interface FleetLoopAlert {
  readonly kind: 'fleet_loop';
  /** Unique per detection; the receiver dedupes on it (it is also the Idempotency-Key). */
  readonly event_id: string;
  readonly signature: string;
  readonly tool: string;
  readonly rule: string;
  readonly intent: string;
  readonly runs: readonly string[];
  readonly tenants: readonly string[];
  readonly threshold: number;
  readonly window_ms: number;
  readonly first_at_ms: number;
  readonly at_ms: number;
}

/** Everything `loopguard alert` delivers from the stops topic. */
export type Alert = StopAlert | FleetLoopAlert;

/** The alert for a FleetLoopDetected event; null for anything else. */
export function toFleetLoopAlert(rec: RecordedEvent): FleetLoopAlert | null {
  const e = rec.event;
  if (e.type !== 'FleetLoopDetected') return null;
  return {
    kind: 'fleet_loop',
    event_id: rec.eventId,
    signature: e.signature,
    tool: e.tool,
    rule: e.rule,
    intent: e.intent,
    runs: e.runIds,
    tenants: e.tenants,
    threshold: e.threshold,
    window_ms: e.windowMs,
    first_at_ms: e.firstAtMs,
    at_ms: e.lastAtMs,
  };
}
