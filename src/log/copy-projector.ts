/**
 * Derives the stops and ledger topics from the runs topic (memory and embedded logs; on Kafka,
 * KafkaCopyProjector), so neither loses or repeats a record whenever a process dies. A copy
 * topic's last record says (SOURCE_HEADER) which runs offset it was copied from, so "published"
 * and "progress committed" are one write, and a projector resumes exactly after the last copy.
 */
import type { RecordedEvent } from '../domain/events.js';
import { type StoredRecord, TOPICS } from './event-log.js';
import { type CopyTopic, copyTopicOf, type EventStore, lastRecord, SOURCE_HEADER } from './event-store.js';
import type { KeyedLog } from './keyed-log.js';

const COPY_TOPICS: readonly CopyTopic[] = [TOPICS.stops, TOPICS.ledger];
const PAGE = 1000;

/** Points a test can stop the process at, to prove every one of them safe. */
export type ProjectorStep = 'stops-published' | 'ledger-published';

export class CopyProjector {
  /** Next runs offset to copy from, per copy topic, once read from the copy topic itself. */
  private readonly next = new Map<CopyTopic, number>();
  private running: Promise<void> = Promise.resolve();
  private queued: Promise<void> | undefined;
  /** Passes queued or running: while there are any, `next` may be about to move. */
  private busy = 0;

  constructor(
    private readonly log: KeyedLog,
    private readonly events: EventStore,
    private readonly onStep: (step: ProjectorStep) => void = () => {},
  ) {}

  /**
   * Notes that `count` runs records from `first` on were appended with nothing to copy; when the
   * projector is idle and right before them, it moves past them without a read (true).
   */
  passed(first: number, count: number): boolean {
    if (this.busy > 0) return false;
    if (!COPY_TOPICS.every((t) => this.next.get(t) === first)) return false;
    for (const t of COPY_TOPICS) this.next.set(t, first + count);
    return true;
  }

  /**
   * Resolves once every record of the runs topic that existed when it was called has its copies.
   * Calls while a pass runs share the one pass queued after it.
   */
  catchUp(): Promise<void> {
    if (this.queued !== undefined) return this.queued;
    this.busy++;
    const pass = this.running.then(
      () => this.project(),
      () => this.project(),
    );
    this.queued = pass;
    this.running = pass.finally(() => {
      this.busy--;
      if (this.queued === pass) this.queued = undefined;
    });
    // The pass starts after the one running, so the queue slot frees as soon as this one begins.
    void this.running.catch(() => undefined);
    return pass;
  }

  /**
   * The events the runs topic holds for `topic` that are not copied yet (a writer died before its
   * projector ran): what a reader adds to the copy topic to see everything, writing nothing.
   */
  async unpublished(topic: CopyTopic): Promise<RecordedEvent[]> {
    const out: RecordedEvent[] = [];
    for (let from = await this.resumeAt(topic); ; ) {
      const page = await this.log.read(TOPICS.runs, from, PAGE);
      if (page.length === 0) return out;
      for (const r of page)
        if (copyTopicOf(r.headers?.['loopguard.type'] ?? '') === topic)
          out.push(await this.events.decode(TOPICS.runs, r.value));
      from = (page.at(-1) as StoredRecord).offset + 1;
    }
  }

  private async project(): Promise<void> {
    this.queued = undefined;
    for (const topic of COPY_TOPICS) {
      let from = this.next.get(topic) ?? (await this.resumeAt(topic));
      for (;;) {
        const page = await this.log.read(TOPICS.runs, from, PAGE);
        if (page.length === 0) break;
        const copies = [];
        for (const r of page) {
          if (copyTopicOf(r.headers?.['loopguard.type'] ?? '') !== topic) continue;
          copies.push(this.events.copyRecord(await this.events.decode(TOPICS.runs, r.value), r.offset));
        }
        if (copies.length > 0) await this.log.append(topic, copies);
        from = (page.at(-1) as StoredRecord).offset + 1;
        this.next.set(topic, from);
      }
      this.onStep(topic === TOPICS.stops ? 'stops-published' : 'ledger-published');
    }
  }

  /**
   * After the runs record the copy topic's last record came from; 0 for an empty topic. A copy
   * made without a projector (EventStore.append) has no source: its runs record is found by key.
   */
  private async resumeAt(topic: CopyTopic): Promise<number> {
    const last = await lastRecord(this.log, topic);
    if (last === undefined) return 0;
    const source = last.headers?.[SOURCE_HEADER];
    if (source !== undefined) return Number(source) + 1;
    const copied = await this.events.decode(topic, last.value);
    const [original] = await this.log.readKey(TOPICS.runs, copied.runId, copied.seq - 1);
    // A copy of nothing in runs: start at the end rather than copy history a second time.
    return original === undefined ? this.log.endOffset(TOPICS.runs) : original.offset + 1;
  }
}
