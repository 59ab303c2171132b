/**
 * The per-run stream port: a run's events read from a seq, appended at an expected seq. The seq
 * is the run's own gapless counter (1, 2, 3 ...), so "the stream is at seq N" means N events were
 * recorded; an append that expected another N is refused with `conflict` and writes nothing, so a
 * second writer of one run learns at once instead of being silently dropped later.
 *
 * Adapters: LogRunStream (memory and embedded logs, over a per-key index) and KafkaRunStream (the
 * partition that owns the run). One contract suite (test/run-stream-contract.ts) runs against all.
 */
import { ConflictError, LoopguardError } from '../domain/errors.js';
import type { RecordedEvent } from '../domain/events.js';
import type { RunState } from '../domain/run-state.js';

/** A run as loading finds it: a snapshot of its state (or none) and the events after it. */
export interface LoadedRun {
  readonly snapshot: RunState | null;
  /** Events after the snapshot's seq (all of them without a snapshot), in seq order. */
  readonly events: readonly RecordedEvent[];
}

export interface RunStream {
  /** The run's events with seq >= fromSeq, in seq order; [] for an unknown run. */
  read(runId: string, fromSeq: number): Promise<RecordedEvent[]>;
  /**
   * Appends events seq expectedSeq+1, expectedSeq+2 ... once the stream is exactly at
   * expectedSeq; resolves when they are durable. Rejects with code `conflict` when the stream
   * has moved on or is behind; the stream is then unchanged for every reader.
   */
  append(runId: string, expectedSeq: number, events: readonly RecordedEvent[]): Promise<void>;
  /**
   * The run for a resume: where the adapter keeps snapshots (Kafka), the newest one plus the
   * events after it, so the cost follows the run, not the log; else every event from seq 1.
   */
  load(runId: string): Promise<LoadedRun>;
  /**
   * The writer's state after an append it made, for adapters that keep snapshots; a hint that
   * never fails the caller (a snapshot is a cache, the stream stays the truth).
   */
  snapshot(state: RunState): void;
  /** Releases what the stream holds (the Kafka one follows the runs topic); not the log itself. */
  close(): Promise<void>;
}

export function streamConflict(runId: string, expectedSeq: number, actualSeq: number): LoopguardError {
  return new ConflictError(
    'conflict',
    `run ${runId}: the append expected the stream at seq ${expectedSeq}, it is at seq ${actualSeq}; another writer got there first`,
    { details: { runId, expectedSeq, actualSeq } },
  );
}

/** The events must belong to the run and continue it without a gap: checked before anything is written. */
export function checkStreamAppend(
  runId: string,
  expectedSeq: number,
  events: readonly RecordedEvent[],
): void {
  if (!Number.isSafeInteger(expectedSeq) || expectedSeq < 0)
    throw new LoopguardError('bad_append', `expectedSeq must be a non-negative integer: ${expectedSeq}`);
  events.forEach((e, i) => {
    if (e.runId !== runId)
      throw new LoopguardError(
        'bad_append',
        `event ${e.eventId}: runId ${e.runId} is not the stream's ${runId}`,
      );
    if (e.seq !== expectedSeq + i + 1)
      throw new LoopguardError(
        'bad_append',
        `event ${e.eventId}: seq ${e.seq}, expected ${expectedSeq + i + 1} (appends continue the stream without gaps)`,
      );
  });
}

export function checkStreamRead(runId: string, fromSeq: number): void {
  if (runId === '') throw new LoopguardError('bad_run_id', 'runId must not be empty');
  if (!Number.isSafeInteger(fromSeq) || fromSeq < 1)
    throw new LoopguardError('bad_offset', `fromSeq must be an integer >= 1: ${fromSeq}`);
}
