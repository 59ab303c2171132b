import { toFleetLoopAlert } from '../alert/fleet-loop-alert.js';
import { LoopguardError, type RecordedEvent } from '../domain/index.js';
import { DEFAULT_FLEET_LOOP, FleetLoopProjection } from '../projections/index.js';
import type { Io } from './io.js';
import type { OpenStore } from './open-store.js';

export interface FleetFlags {
  readonly threshold?: string;
  readonly 'window-ms'?: string;
  readonly json?: boolean;
}

function positive(flag: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0)
    throw new LoopguardError('usage', `--${flag} must be a positive integer, got ${value}`);
  return n;
}

/** One detection as a person reads it. */
export function formatFleetLoop(rec: RecordedEvent): string {
  const e = rec.event;
  if (e.type !== 'FleetLoopDetected') return '';
  return `${new Date(e.lastAtMs).toISOString()}  FLEET LOOP  ${e.tool} ${e.rule} ${e.intent}\n  ${e.runIds.length} runs within ${e.windowMs / 1000} s (threshold ${e.threshold}): ${e.runIds.join(', ')}; tenants: ${e.tenants.join(', ') || '-'}\n`;
}

/**
 * `loopguard fleet [--threshold N] [--window-ms W]`: folds the runs topic through the fleet-loop
 * projection and publishes each detection not yet on the stops topic there, where `loopguard
 * alert` delivers it. Detections are deterministic (same log, same event ids), so running it
 * again publishes nothing twice.
 */
export async function fleetCommand(store: OpenStore, flags: FleetFlags, io: Io): Promise<number> {
  const fleet = new FleetLoopProjection({
    threshold: positive('threshold', flags.threshold, DEFAULT_FLEET_LOOP.threshold),
    windowMs: positive('window-ms', flags['window-ms'], DEFAULT_FLEET_LOOP.windowMs),
  });
  const detected: RecordedEvent[] = [];
  await store.scan((rec) => {
    for (const d of fleet.apply(rec)) detected.push(d);
  });
  const published = new Set<string>();
  for await (const e of store.events.readStops(0))
    if (e.event.type === 'FleetLoopDetected') published.add(e.eventId);
  const fresh = detected.filter((d) => !published.has(d.eventId));
  await store.events.appendAlerts(fresh);
  for (const d of detected)
    io.out(flags.json ? `${JSON.stringify(toFleetLoopAlert(d))}\n` : formatFleetLoop(d));
  io.err(
    `fleet: ${detected.length} fleet loops detected, ${fresh.length} newly published on the stops topic`,
  );
  return 0;
}
