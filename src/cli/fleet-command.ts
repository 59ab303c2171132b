import { LoopguardError, type RecordedEvent } from '../domain/index.js';
import { DEFAULT_FLEET_LOOP, FleetLoopProjection } from '../projections/index.js';
import type { Io } from './io.js';
import type { OpenStore } from './open-store.js';
import { printStop } from './stops-command.js';

export interface FleetFlags {
  readonly threshold?: number;
  readonly 'window-ms'?: number;
  readonly json?: boolean;
  readonly follow?: boolean;
  readonly group?: string;
}

/** The events the fleet-loop projection reads; the rest need not be held for sorting. */
const FOLDED = new Set(['RunStarted', 'ToolCallRequested', 'GuardDecided', 'RunStopped']);

/** The consumer group `fleet --follow --kafka` reads the runs topic as, unless `--group` names another. */
const DEFAULT_FLEET_GROUP = 'loopguard-fleet';

/**
 * `loopguard fleet [--threshold N] [--window-ms W] [--follow]`: folds the runs topic through the
 * fleet-loop projection and publishes each detection not yet on the stops topic there (for
 * `loopguard alert`). Detections are deterministic (same log, same event ids), so running it again
 * publishes nothing twice. `--follow` goes on until the signal, having taken back the detections
 * already published (a restarted watcher on Kafka resumes from its group's offsets).
 */
export async function fleetCommand(
  store: OpenStore,
  flags: FleetFlags,
  io: Io,
  /** Ends `--follow`. */
  signal?: AbortSignal,
): Promise<number> {
  const fleet = new FleetLoopProjection({
    threshold: flags.threshold ?? DEFAULT_FLEET_LOOP.threshold,
    windowMs: flags['window-ms'] ?? DEFAULT_FLEET_LOOP.windowMs,
  });
  const published = new Map<string, RecordedEvent>();
  for await (const e of store.events.readStops(0))
    if (e.event.type === 'FleetLoopDetected') published.set(e.eventId, e);
  const print = (d: RecordedEvent) => printStop(d, flags.json ?? false, io);
  if (flags.follow) {
    if (signal === undefined) throw new LoopguardError('internal', 'fleet --follow needs a signal to end it');
    for (const e of published.values()) fleet.restore(e);
    io.err(`fleet: watching ${store.where}; Ctrl-C ends it`);
    await store.followRuns(
      async (rec) => {
        for (const d of fleet.apply(rec)) {
          if (published.has(d.eventId)) continue;
          await store.publishAlerts([d]);
          published.set(d.eventId, d);
          print(d);
        }
      },
      signal,
      flags.group ?? DEFAULT_FLEET_GROUP,
    );
    return 0;
  }
  // A partitioned runs topic is read in no fixed interleaving of its partitions: folded in event
  // time order (a run's own seq breaks ties) the same log always gives the same detections.
  const events: RecordedEvent[] = [];
  await store.scan((rec) => {
    if (FOLDED.has(rec.event.type)) events.push(rec);
  });
  events.sort((a, b) => a.atMs - b.atMs || (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : a.seq - b.seq));
  const detected = events.flatMap((rec) => fleet.apply(rec));
  const fresh = detected.filter((d) => !published.has(d.eventId));
  await store.publishAlerts(fresh);
  for (const d of detected) print(d);
  io.err(
    `fleet: ${detected.length} fleet loops detected, ${fresh.length} newly published on the stops topic`,
  );
  return 0;
}
