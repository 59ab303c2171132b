import { TOPICS } from '../log/event-log.js';
import type { EventStore } from '../log/event-store.js';
import type { KafkaLog } from '../log/kafka/kafka-log.js';
import { scanCountedRuns } from '../log/kafka/scan-counted-runs.js';
import { Projections } from '../projections/index.js';

export interface KafkaRebuild {
  readonly projections: Projections;
  /** Records read from the runs topic (every partition, up to its end when the rebuild began). */
  readonly records: number;
  readonly seconds: number;
  readonly eventsPerSecond: number;
}

/**
 * Folds the whole runs topic into fresh projections with one consumer, streaming, counting only
 * what the batch rule counts (scan-counted-runs.ts), as a run's own stream does: paging through
 * `EventStore.readRuns` would start a consumer per page, which dominates the time on Kafka.
 * Per-run order holds because a run's events share a key and so a partition.
 */
export async function rebuildFromKafka(
  log: KafkaLog,
  events: EventStore,
  onProgress?: (n: number) => void,
): Promise<KafkaRebuild> {
  const started = performance.now();
  const projections = new Projections();
  const records = await scanCountedRuns(log, events, (rec) => {
    projections.apply(rec);
    if (onProgress !== undefined && projections.events % 5000 === 0) onProgress(projections.events);
  });
  const seconds = (performance.now() - started) / 1000;
  return {
    projections,
    records,
    seconds,
    eventsPerSecond: Math.round(records / Math.max(seconds, 1e-6)),
  };
}

/** Run ids on the runs topic, from the record keys alone: no decoding needed. */
export async function kafkaRunIds(log: KafkaLog): Promise<Set<string>> {
  const ids = new Set<string>();
  await log.scan(TOPICS.runs, (r) => {
    ids.add(r.key);
  });
  return ids;
}
