/**
 * The per-run snapshot strategy (src/snapshots/per-run.ts) on the compacted `loopguard.snapshots`
 * topic: a writer records a run's snapshot without waiting (a missing or stale snapshot only
 * means a longer tail to read), and a follower keeps, per run, where its newest snapshot is, so
 * loading a run reads one record instead of the run's history. Only positions are held in
 * memory, never snapshots.
 */

import { RunSnapshotCodec, type RunSnapshotRecord } from '../../snapshots/index.js';
import { TOPICS } from '../event-log.js';
import type { EventStore } from '../event-store.js';
import { withTimeout } from './kafka-error.js';
import type { KafkaLog } from './kafka-log.js';
import { type FollowedMessage, PartitionFollower } from './partition-follower.js';
import { readRanges } from './partition-reader.js';

interface Position {
  /** Offset of the snapshot record in the snapshots topic. */
  readonly offset: number;
  readonly seq: number;
}

export class RunSnapshots {
  private readonly newest = new Map<string, Position>();
  private readonly follower: PartitionFollower;

  private constructor(
    private readonly log: KafkaLog,
    private readonly codec: RunSnapshotCodec,
    private readonly topic: string,
    private readonly timeoutMs: number,
  ) {
    this.follower = new PartitionFollower(log.kafka, topic, 1, (m) => this.fold(m));
  }

  static async open(events: EventStore, log: KafkaLog, timeoutMs: number): Promise<RunSnapshots> {
    const info = await log.prepare(TOPICS.snapshots);
    const codec = await RunSnapshotCodec.create(events.schemas, events.subjectFor(TOPICS.snapshots));
    return new RunSnapshots(log, codec, info.name, timeoutMs);
  }

  /** Records `s`, not waiting for it: loads fall back on the runs topic until it is there. */
  write(s: RunSnapshotRecord): void {
    this.log.append(TOPICS.snapshots, [{ key: s.runId, value: this.codec.encode(s) }]).catch(() => undefined);
  }

  /** The newest snapshot of `runId` at or below `maxSeq`, once the follower has caught up; null if none. */
  async newestUpTo(runId: string, maxSeq: number): Promise<RunSnapshotRecord | null> {
    const end = (await this.log.partitionEnds(TOPICS.snapshots))[0]?.high ?? 0;
    await withTimeout(this.follower.foldedTo(0, end), this.timeoutMs, 'snapshots fold');
    const at = this.newest.get(runId);
    if (at === undefined || at.seq > maxSeq) return null;
    const [found] = await readRanges(
      this.log.kafka,
      this.topic,
      [{ partition: 0, from: at.offset, to: at.offset + 1 }],
      this.timeoutMs,
    );
    // Compaction may have removed it in favour of a later, lower one: the caller reads the runs topic instead.
    if (found === undefined || found.offset !== at.offset || found.message.value === null) return null;
    const read = await this.codec.decode(found.message.value);
    return 'missing' in read ? null : read;
  }

  close(): Promise<void> {
    return this.follower.close();
  }

  private async fold(m: FollowedMessage): Promise<void> {
    const s = await this.codec.peek(m.value).catch(() => null);
    if (s === null) return; // not a snapshot; a cache can skip what it cannot read
    // A late snapshot from an older writer must not hide a newer one.
    if (s.seq >= (this.newest.get(s.runId)?.seq ?? 0))
      this.newest.set(s.runId, { offset: m.offset, seq: s.seq });
  }
}
