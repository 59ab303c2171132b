/**
 * Where a group that never decided a requests partition begins. A mistyped `--group` must not
 * re-decide the whole request history (thousands of decisions and runs records answering requests
 * their clients gave up on long ago), so a new group starts at the partition's end as it is when
 * the worker starts, unless the operator asks for the history (`--from-beginning`). The start is
 * committed for the group before the worker joins it, so a request published once the worker said
 * it is in the group is decided, whichever worker takes the partition and whenever.
 */
import type { Admin } from 'kafkajs';
import { fetchTopicOffsets } from '../log/kafka/topic-registry.js';

/**
 * Commits the start of every partition the group never committed on (unless `fromBeginning`), and
 * returns what the worker's log says of it: null when every partition has its group's offset.
 */
export async function startNewPartitions(
  admin: Admin,
  groupId: string,
  topic: string,
  fromBeginning: boolean,
): Promise<string | null> {
  const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
  const fresh = new Set(
    (committed?.partitions ?? []).filter((p) => Number(p.offset) < 0).map((p) => p.partition),
  );
  if (fresh.size === 0) return null;
  // Under the adapter's retry policy: a leader moving must not stop a worker from starting.
  const ends = await fetchTopicOffsets(admin, topic);
  const started = ends
    .filter((e) => fresh.has(e.partition))
    .map((e) => ({ partition: e.partition, offset: Number(fromBeginning ? e.low : e.high) }))
    .sort((a, b) => a.partition - b.partition);
  const which = `group ${groupId} has decided nothing on partitions [${started.map((s) => s.partition).join(',')}] of ${topic}`;
  if (fromBeginning) return `${which}: deciding every request already there (--from-beginning)`;
  if (started.every((s) => s.offset === 0)) return null;
  try {
    await admin.setOffsets({
      groupId,
      topic,
      partitions: started.map((s) => ({ partition: s.partition, offset: String(s.offset) })),
    });
  } catch {
    // The group has members already: the first of them committed the start when it began.
    return null;
  }
  return `${which}: starting at their end (${started.map((s) => `${s.partition}@${s.offset}`).join(', ')}); requests published before are not decided (--from-beginning decides them)`;
}
