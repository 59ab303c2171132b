/**
 * The store port, in the emmett shape: a run's events read from a seq (`readStream`), appended at
 * an expected stream version (`appendToStream`). The version is the run's own gapless seq, so "the
 * stream is at version N" means N events were recorded; an append that expected another N is
 * refused with `conflict` and writes nothing, so a second writer of one run learns at once instead
 * of being silently dropped later. `readAll` counts exactly what `readStream` counts.
 *
 * Adapters: LogRunStream (memory and embedded logs) and KafkaRunStream (the batch rule that ignores
 * a losing writer's batch lives in its reads); test/run-stream-contract.ts runs against each.
 */
import { ConflictError, LoopguardError } from '../domain/errors.js';
import type { RecordedEvent, RunStatus } from '../domain/events.js';
import type { RunState } from '../domain/run-state.js';

/** A run as loading finds it: a snapshot of its state (or none) and the events after it. */
export interface LoadedRun {
  readonly snapshot: RunState | null;
  /** Events after the snapshot's seq (all of them without a snapshot), in seq order. */
  readonly events: readonly RecordedEvent[];
}

export interface AppendToStreamOptions {
  /** The version (last seq) the writer found the stream at: 0 for a new run. */
  readonly expectedStreamVersion: number;
  /**
   * The run's status once these events are in, as the writer's run machine has it: a hint an
   * adapter may take instead of folding the run again (the embedded store's run row cannot tell
   * the end of a wait alone).
   */
  readonly status?: RunStatus;
}

export interface AppendToStreamResult {
  /** The stream's version after the append: what the writer's next append expects. */
  readonly nextExpectedStreamVersion: number;
}

export interface RunStream {
  /** The run's events with seq >= fromSeq (default 1), in seq order; [] for an unknown run. */
  readStream(runId: string, fromSeq?: number): Promise<RecordedEvent[]>;
  /**
   * Appends events seq v+1, v+2 ... once the stream is exactly at v = expectedStreamVersion;
   * resolves when they are durable. Rejects with code `conflict` when the stream has moved on or
   * is behind; the stream is then unchanged for every reader.
   */
  appendToStream(
    runId: string,
    events: readonly RecordedEvent[],
    opts: AppendToStreamOptions,
  ): Promise<AppendToStreamResult>;
  /**
   * Every event of every run that counts, in per-run seq order (runs interleaved), from the first
   * record of the log up to its end when the read began; resolves with the records read.
   */
  readAll(apply: (event: RecordedEvent) => void): Promise<number>;
  /**
   * The run for a resume: where the adapter keeps snapshots (Kafka), the newest one plus the
   * events after it, so the cost follows the run, not the log; else every event from seq 1.
   */
  load(runId: string): Promise<LoadedRun>;
  /**
   * The runs started as sub-agents of `runId` (their RunStarted names it as parent), as the log
   * has them now, sorted by run id; [] for none. A resumed run's family is found so. Sorted, not
   * in start order: a partitioned log has no one order of starts across partitions.
   */
  childrenOf(runId: string): Promise<readonly string[]>;
  /**
   * The writer's state after an append it made, for adapters that keep snapshots; a hint that
   * never fails the caller (a snapshot is a cache, the stream stays the truth).
   */
  snapshot(state: RunState): void;
  /** Releases what the stream holds (the Kafka one follows the runs topic); not the log itself. */
  close(): Promise<void>;
}

export function streamConflict(runId: string, expected: number, actual: number): LoopguardError {
  return new ConflictError(
    'conflict',
    `run ${runId}: the append expected the stream at version ${expected}, it is at ${actual}; another writer got there first`,
    { details: { runId, expectedStreamVersion: expected, actualStreamVersion: actual } },
  );
}

/** The events must belong to the run and continue it without a gap: checked before anything is written. */
export function checkStreamAppend(runId: string, expected: number, events: readonly RecordedEvent[]): void {
  checkStreamRead(runId, 1);
  const refused = (message: string) => new LoopguardError('bad_append', message);
  if (!Number.isSafeInteger(expected) || expected < 0)
    throw refused(`expectedStreamVersion must be a non-negative integer: ${expected}`);
  events.forEach((e, i) => {
    if (e.runId !== runId) throw refused(`event ${e.eventId}: runId ${e.runId} is not the stream's ${runId}`);
    if (e.seq !== expected + i + 1)
      throw refused(
        `event ${e.eventId}: seq ${e.seq}, expected ${expected + i + 1} (appends continue the stream without gaps)`,
      );
  });
}

export function checkStreamRead(runId: string, fromSeq: number): void {
  if (runId === '') throw new LoopguardError('bad_run_id', 'runId must not be empty');
  if (!Number.isSafeInteger(fromSeq) || fromSeq < 1)
    throw new LoopguardError('bad_offset', `fromSeq must be an integer >= 1: ${fromSeq}`);
}
