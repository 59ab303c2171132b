/**
 * Which records of a run on the Kafka runs topic belong to its stream. Kafka has no conditional
 * append, so every writer appends optimistically and every reader applies the same rule, in
 * partition order: a batch continues the run only if it was written at the seq the run had
 * reached, and only as a whole. A second writer's batch, a producer retry's duplicate and a late
 * zombie append are ignored by every reader alike, and the losing writer is told `conflict`.
 *
 * Headers of a run record: `loopguard.seq`; from a RunStream writer also `loopguard.after` (the
 * seq its append expected) and `loopguard.batch` (unique per append). A record without a batch
 * (EventStore.append) counts when its seq is the next.
 */
import { SEQ_HEADER } from '../event-store.js';

export const AFTER_HEADER = 'loopguard.after';
export const BATCH_HEADER = 'loopguard.batch';

/** The headers foldRunRecord reads: all a reader of every record needs of them. */
export const RUN_HEADERS: readonly string[] = [SEQ_HEADER, BATCH_HEADER, AFTER_HEADER];

export interface RunHead {
  readonly seq: number;
  /** The batch of the last counted record; null for an unconditional one. */
  readonly batch: string | null;
}

export const EMPTY_HEAD: RunHead = { seq: 0, batch: null };

/** The run's head after `headers`' record, or null when the record does not count. */
export function foldRunRecord(
  head: RunHead,
  headers: Readonly<Record<string, string>> | undefined,
): RunHead | null {
  const seq = Number(headers?.[SEQ_HEADER]);
  if (!Number.isSafeInteger(seq) || seq !== head.seq + 1) return null;
  const batch = headers?.[BATCH_HEADER];
  if (batch === undefined) return { seq, batch: null };
  const after = Number(headers?.[AFTER_HEADER]);
  // The first record of a batch continues whatever the run reached (its seq is the next one);
  // a later record counts only if the record before it was its own batch's.
  if (seq === after + 1 || head.batch === batch) return { seq, batch };
  return null;
}

/** Folds a record of run `key` into `heads`: the run's new head, or null (nothing changed) when it does not count. */
export function foldInto(
  heads: Map<string, RunHead>,
  key: string,
  headers: Readonly<Record<string, string>> | undefined,
): RunHead | null {
  const head = foldRunRecord(heads.get(key) ?? EMPTY_HEAD, headers);
  if (head !== null) heads.set(key, head);
  return head;
}
