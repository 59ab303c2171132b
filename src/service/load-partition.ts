/**
 * What a worker taking a requests partition over loads, given the metadata of the group's
 * committed offset for it: the snapshot the metadata points at and the runs records after it, or
 * the whole runs partition when there is no usable snapshot (a snapshot only ever saves work).
 */

import { parsePointer, type SnapshotPointer } from '../snapshots/index.js';
import { PartitionRuns } from './partition-runs.js';
import type { RunsContext } from './runs-context.js';

export interface LoadedPartition {
  readonly runs: PartitionRuns;
  /** The snapshot it started from, to carry on in later commits; null when it folded the partition. */
  readonly pointer: SnapshotPointer | null;
  /** Where the runs came from, for the log: the snapshot, or why there was none. */
  readonly source: string;
}

export async function loadPartition(
  ctx: RunsContext,
  partition: number,
  metadata: string | null | undefined,
): Promise<LoadedPartition> {
  const pointer = parsePointer(metadata);
  let why = 'no snapshot committed';
  if (pointer !== null) {
    const read = await ctx.snapshots.read(pointer, ctx.group, partition);
    if (!('missing' in read)) {
      const runs = await PartitionRuns.load(ctx, partition, read);
      return { runs, pointer, source: `snapshot ${pointer.id} + ${runs.loaded.runsRead} runs records` };
    }
    why = `snapshot ${pointer.id} unusable: ${read.missing}`;
  }
  const runs = await PartitionRuns.load(ctx, partition);
  return { runs, pointer: null, source: `${runs.loaded.runsRead} runs records (${why})` };
}
