import type { RunStream } from '../ports/run-stream.js';
import { Projections } from '../projections/index.js';

export interface StreamRebuild {
  readonly projections: Projections;
  /** Records read from the runs topic (every partition, up to its end when the rebuild began). */
  readonly records: number;
  readonly seconds: number;
  readonly eventsPerSecond: number;
}

/**
 * Folds every run into fresh projections through the store port's `readAll`, which counts what
 * a run's own stream counts (on Kafka: the batch rule, one consumer for the whole topic rather
 * than one per page).
 */
export async function rebuildFromStream(
  stream: RunStream,
  onProgress?: (n: number) => void,
): Promise<StreamRebuild> {
  const started = performance.now();
  const projections = new Projections();
  const records = await stream.readAll((rec) => {
    projections.apply(rec);
    if (onProgress !== undefined && projections.events % 5000 === 0) onProgress(projections.events);
  });
  const seconds = (performance.now() - started) / 1000;
  return { projections, records, seconds, eventsPerSecond: Math.round(records / Math.max(seconds, 1e-6)) };
}
