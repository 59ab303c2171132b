/**
 * Every event that counts on the Kafka runs topic, decoded, in per-run order: the one reader of
 * whole runs on Kafka that rebuild, audit, whatif, ui and fleet go through. It folds the record
 * headers with the batch rule every run-stream reader applies (run-batch-fold.ts), so a losing
 * writer's batch and a zombie append are skipped here exactly as `KafkaRunStream.read` skips
 * them; "drop if seq <= last" would fold a losing batch that runs past the winner's head.
 *
 * A run's records share a key and so a partition, read in offset order, so one head per key is
 * enough however the partitions interleave.
 */
import type { RecordedEvent } from '../../domain/events.js';
import { TOPICS } from '../event-log.js';
import type { EventStore } from '../event-store.js';
import type { KafkaLog } from './kafka-log.js';
import { EMPTY_HEAD, foldRunRecord, type RunHead } from './run-batch-fold.js';

/** Hands every counted event to `apply`; resolves with the number of records read (counted or not). */
export function scanCountedRuns(
  log: KafkaLog,
  events: EventStore,
  apply: (rec: RecordedEvent) => void,
): Promise<number> {
  const heads = new Map<string, RunHead>();
  return log.scan(TOPICS.runs, (r) => {
    const head = foldRunRecord(heads.get(r.key) ?? EMPTY_HEAD, r.headers);
    if (head === null) return;
    heads.set(r.key, head);
    // Synchronous for every record whose schema is known: no promise per record.
    const known = events.decodeKnown(TOPICS.runs, r.value);
    if (known !== undefined) {
      apply(known);
      return;
    }
    return events.decode(TOPICS.runs, r.value).then(apply);
  });
}
