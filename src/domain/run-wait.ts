import type { EventOf, RecordedEvent } from './events.js';
import type { RunState } from './run-state.js';

/**
 * A run's bounded wait, as the rules the run machine applies (src/machines/run-machine.ts): the
 * machine alone enters and leaves WAITING and writes these fields; `evolve` never does.
 */

/** The wait a RunWaiting begins: until when, and on which call (its fingerprint, from the window). */
export function waitBegun(
  s: RunState,
  e: EventOf<'RunWaiting'>,
): Pick<RunState, 'waitUntilMs' | 'waitCallFingerprint'> {
  const fp = s.window.find((w) => w.callId === e.callId)?.fingerprint ?? null;
  return { waitUntilMs: e.untilMs, waitCallFingerprint: fp };
}

/** What a run keeps of a wait once it has left it. */
export const NO_WAIT: Pick<RunState, 'waitUntilMs' | 'waitCallFingerprint'> = Object.freeze({
  waitUntilMs: null,
  waitCallFingerprint: null,
});

/**
 * Whether an event can end a wait at all (an execute decision before a call): the part of
 * `endsWait` that reads the event alone. For any other event a reader that keeps only a run's
 * status knows the machine's answer without the run's state.
 */
export function mayEndWait(rec: RecordedEvent): boolean {
  const e = rec.event;
  return e.type === 'GuardDecided' && e.phase === 'before' && e.decision === 'execute';
}

/**
 * Whether an event ends the run's bounded wait: the execute decision of the waited-for call, or of
 * any call once the wait ran out (another call may run during a backoff). The run machine's guard.
 */
export function endsWait(s: RunState, rec: RecordedEvent): boolean {
  if (s.status !== 'WAITING' || !mayEndWait(rec)) return false;
  const call = s.inFlight;
  return call !== null && (call.fingerprint === s.waitCallFingerprint || rec.atMs >= (s.waitUntilMs ?? 0));
}
