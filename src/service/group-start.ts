/**
 * Where a group that never decided a requests partition begins. A mistyped `--group` must not
 * re-decide the whole request history (thousands of decisions and runs records answering requests
 * their clients gave up on long ago), so a new group starts at the partition's end as it is when
 * the worker starts, unless the operator asks for the history (`--from-beginning`). The start is
 * committed for the group before the worker joins it, so a request published once the worker said
 * it is in the group is decided, whichever worker takes the partition and whenever.
 */
import type { Admin } from 'kafkajs';

export interface GroupStart {
  /** Partitions without a committed offset, and the offset each starts at. */
  readonly started: ReadonlyArray<{ readonly partition: number; readonly offset: number }>;
}

export async function startNewPartitions(
  admin: Admin,
  groupId: string,
  topic: string,
  fromBeginning: boolean,
): Promise<GroupStart> {
  const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
  const fresh = new Set(
    (committed?.partitions ?? []).filter((p) => Number(p.offset) < 0).map((p) => p.partition),
  );
  if (fresh.size === 0) return { started: [] };
  const ends = await admin.fetchTopicOffsets(topic);
  const started = ends
    .filter((e) => fresh.has(e.partition))
    .map((e) => ({ partition: e.partition, offset: Number(fromBeginning ? e.low : e.high) }))
    .sort((a, b) => a.partition - b.partition);
  if (fromBeginning || started.every((s) => s.offset === 0)) return { started };
  try {
    await admin.setOffsets({
      groupId,
      topic,
      partitions: started.map((s) => ({ partition: s.partition, offset: String(s.offset) })),
    });
  } catch {
    // The group has members already: the first of them committed the start when it began.
    return { started: [] };
  }
  return { started };
}
