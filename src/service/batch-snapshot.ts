/**
 * A batch's transaction carries a snapshot of its partition's runs when the per-partition
 * strategy says one is due (src/snapshots/per-partition.ts). The records of this batch on the
 * runs partition are where a later tail starts: the fold skips what the states already have.
 */
import { randomUUID } from 'node:crypto';
import type { RecordMetadata, Transaction } from 'kafkajs';
import { partitionSnapshotDue, type SnapshotPointer } from '../snapshots/index.js';
import type { PartitionRuns } from './partition-runs.js';
import type { PartitionSnapshots } from './partition-snapshots.js';

/** A snapshot added to a batch's transaction, and how many ended runs it put aside. */
export interface SnapshotWritten {
  readonly pointer: SnapshotPointer;
  readonly putAside: number;
}

export interface BatchSnapshotContext {
  readonly snapshots: PartitionSnapshots;
  readonly group: string;
  /** The physical runs topic, to find this batch's offset on it. */
  readonly runsTopic: string;
  readonly everyRecords: number;
  readonly endedIdleMs: number;
}

/** Adds the snapshot to `txn` when one is due; null when not (or the batch wrote no runs record). */
export async function snapshotInBatch(
  ctx: BatchSnapshotContext,
  txn: Transaction,
  runs: PartitionRuns,
  partition: number,
  sent: readonly RecordMetadata[],
  sinceSnapshot: number,
): Promise<SnapshotWritten | null> {
  if (!partitionSnapshotDue(sinceSnapshot, ctx.everyRecords, runs.size)) return null;
  const base = sent.find((m) => m.topicName === ctx.runsTopic && m.partition === partition)?.baseOffset;
  if (base === undefined) return null;
  const id = randomUUID();
  // Put aside before the snapshot, so it keeps only where they are. An abort drops the worker's
  // PartitionRuns whole, so changing it before the commit cannot outlive a failed transaction.
  const idle = runs.idleEnded(ctx.endedIdleMs);
  for (const run of idle) runs.putAside(await ctx.snapshots.writeEnded(txn, ctx.group, partition, id, run));
  const pointer = await ctx.snapshots.write(txn, ctx.group, partition, {
    id,
    runsFrom: Number(base),
    runs: runs.held(),
    ended: runs.endedRuns(),
  });
  return { pointer, putAside: idle.length };
}
