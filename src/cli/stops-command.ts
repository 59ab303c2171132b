import { toFleetLoopAlert } from '../alert/fleet-loop-alert.js';
import type { EventOf, RecordedEvent, StopReport } from '../domain/index.js';
import type { Io } from './io.js';
import { jsonLine } from './json-output.js';

/** One detection as a person reads it. */
function formatFleetLoop(e: EventOf<'FleetLoopDetected'>): string {
  return `${new Date(e.lastAtMs).toISOString()}  FLEET LOOP  ${e.tool} ${e.rule} ${e.intent}\n  ${e.runIds.length} runs within ${e.windowMs / 1000} s (threshold ${e.threshold}): ${e.runIds.join(', ')}; tenants: ${e.tenants.join(', ') || '-'}\n`;
}

function formatStop(runId: string, atMs: number, r: StopReport): string {
  const lines = [
    `${new Date(atMs).toISOString()}  ${runId}  ${r.terminalState}  ${r.guardReason}`,
    `  ${r.message}`,
    `  done: ${r.completed.join(', ') || '-'}; operations: ${r.completedOperations.join(', ') || '-'}${r.inDoubtOperations.length ? `; in doubt: ${r.inDoubtOperations.join(', ')}` : ''}`,
    `  unmet: ${r.unmetPrecondition ?? '-'}; resume: ${r.resumeCondition}; next: ${r.nextAllowedAction}`,
    `  spend: ${r.spend.steps} steps, ${r.spend.toolCalls} calls, ${r.spend.tokens} tokens, $${r.spend.costUsd}, ${r.spend.elapsedMs} ms`,
  ];
  return `${lines.join('\n')}\n`;
}

/** Prints one event of the stops topic (a stop report or a fleet loop), as text or one JSON line. */
export function printStop(e: RecordedEvent, json: boolean, io: Io): void {
  if (e.event.type === 'FleetLoopDetected') {
    io.out(json ? `${JSON.stringify(toFleetLoopAlert(e))}\n` : formatFleetLoop(e.event));
    return;
  }
  if (e.event.type !== 'RunStopped') return;
  io.out(
    json
      ? jsonLine({ event_id: e.eventId, run_id: e.runId, at_ms: e.atMs, report: e.event.report })
      : formatStop(e.runId, e.atMs, e.event.report),
  );
}
