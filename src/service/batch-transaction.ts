/**
 * What one batch's Kafka transaction carries, in order: the runs' events, the decisions and the
 * dead letters, a snapshot of the partition when one is due (batch-snapshot.ts), and the consumed
 * offsets with the newest snapshot's place as their metadata (snapshot-pointer.ts). The caller
 * commits or aborts; nothing here is visible before the commit.
 */
import type { Transaction } from 'kafkajs';
import { pointerMetadata, type SnapshotPointer } from '../snapshots/index.js';
import { type BatchSnapshotContext, type SnapshotWritten, snapshotInBatch } from './batch-snapshot.js';
import type { PartitionRuns } from './partition-runs.js';
import type { BatchOutput } from './process-batch.js';

export interface BatchTransactionContext {
  readonly snapshot: BatchSnapshotContext;
  readonly groupId: string;
  /** The physical requests topic whose offsets the transaction commits. */
  readonly topic: string;
}

/** The partition as the transaction finds it. */
export interface PartitionHead {
  readonly runs: PartitionRuns;
  readonly pointer: SnapshotPointer | null;
  readonly sinceSnapshot: number;
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
  const snapshot = await snapshotInBatch(
    ctx.snapshot,
    txn,
    head.runs,
    partition,
    sent,
    head.sinceSnapshot + out.recorded.length,
  );
  const partitions = [
    {
      partition,
      offset: String(nextOffset),
      metadata: pointerMetadata(snapshot?.pointer ?? head.pointer),
    },
  ];
  // kafkajs's types omit the metadata its TxnOffsetCommit request writes for each partition.
  await txn.sendOffsets({
    consumerGroupId: ctx.groupId,
    topics: [{ topic: ctx.topic, partitions }],
  } as Parameters<Transaction['sendOffsets']>[0]);
  return snapshot;
}
