/**
 * What one batch's Kafka transaction carries, in order: the runs' events, the decisions and the
 * dead letters, a snapshot of the partition's runs when the per-partition strategy says one is due
 * (src/snapshots/per-partition.ts), and the consumed offsets with the newest snapshot's place as
 * their metadata (snapshot-pointer.ts). The caller commits or aborts; nothing here is visible
 * before the commit.
 */
import { randomUUID } from 'node:crypto';
import type { RecordMetadata, Transaction } from 'kafkajs';
import { partitionSnapshotDue, pointerMetadata, type SnapshotPointer } from '../snapshots/index.js';
import type { PartitionRuns } from './partition-runs.js';
import type { PartitionSnapshots } from './partition-snapshots.js';
import type { BatchOutput } from './process-batch.js';

export interface BatchTransactionContext {
  readonly snapshots: PartitionSnapshots;
  readonly groupId: string;
  /** The physical requests topic whose offsets the transaction commits. */
  readonly topic: string;
  /** The physical runs topic, to find this batch's offset on it. */
  readonly runsTopic: string;
  readonly everyRecords: number;
  readonly endedIdleMs: number;
}

/** The partition as the transaction finds it. */
export interface PartitionHead {
  readonly runs: PartitionRuns;
  readonly pointer: SnapshotPointer | null;
  readonly sinceSnapshot: number;
}

/** A snapshot added to a batch's transaction, and how many ended runs it put aside. */
export interface SnapshotWritten {
  readonly pointer: SnapshotPointer;
  readonly putAside: number;
}

export async function writeBatch(
  ctx: BatchTransactionContext,
  txn: Transaction,
  head: PartitionHead,
  partition: number,
  nextOffset: number,
  out: BatchOutput,
): Promise<SnapshotWritten | null> {
  const sent = await txn.sendBatch({ topicMessages: out.topicMessages, acks: -1 });
  const since = head.sinceSnapshot + out.recorded.length;
  const snapshot = await snapshotInBatch(ctx, txn, head.runs, partition, sent, since);
  const metadata = pointerMetadata(snapshot?.pointer ?? head.pointer);
  const partitions = [{ partition, offset: String(nextOffset), metadata }];
  // kafkajs's types omit the metadata its TxnOffsetCommit request writes for each partition.
  await txn.sendOffsets({
    consumerGroupId: ctx.groupId,
    topics: [{ topic: ctx.topic, partitions }],
  } as Parameters<Transaction['sendOffsets']>[0]);
  return snapshot;
}

/**
 * Adds the snapshot to `txn` when one is due; null when not (or the batch wrote no runs record).
 * The records of this batch on the runs partition are where a later tail starts: the fold skips
 * what the states already have.
 */
async function snapshotInBatch(
  ctx: BatchTransactionContext,
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
  for (const run of idle) runs.putAside(await ctx.snapshots.writeEnded(txn, ctx.groupId, partition, id, run));
  const pointer = await ctx.snapshots.write(txn, ctx.groupId, partition, {
    id,
    runsFrom: Number(base),
    runs: runs.held(),
    ended: runs.endedRuns(),
  });
  return { pointer, putAside: idle.length };
}
