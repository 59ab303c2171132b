/**
 * Derives the stops and ledger topics from the runs topic (memory and embedded logs; on Kafka,
 * KafkaCopyProjector), so neither loses or repeats a record whenever a process dies. A copy
 * topic's last record says (SOURCE_HEADER) which runs offset it was copied from, so "published"
 * and "progress committed" are one write, and a projector resumes exactly after the last copy.
 */

import { LoopguardError } from '../domain/errors.js';
import type { RecordedEvent } from '../domain/events.js';
import { type StoredRecord, TOPICS } from './event-log.js';
import {
  type CopyTopic,
  copyTopicOf,
  type EventStore,
  SOURCE_HEADER,
  TYPE_HEADER,
  topicTail,
} from './event-store.js';
import type { KeyedLog } from './keyed-log.js';

const COPY_TOPICS: readonly CopyTopic[] = [TOPICS.stops, TOPICS.ledger];
const PAGE = 1000;

/** Points a test can stop the process at, to prove every one of them safe. */
export type ProjectorStep = 'stops-published' | 'ledger-published';

export class CopyProjector {
  /** Next runs offset to copy from, per copy topic, once read from the copy topic itself. */
  private readonly next = new Map<CopyTopic, number>();
  /**
   * Where each copy topic ends as this projector last read or wrote it. Its appends are made only
   * there: when another process on the data dir copied first, the append is refused and this one
   * goes on after that process's copies instead of copying the same records again.
   */
  private readonly end = new Map<CopyTopic, number>();
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
    for (let { from } = await this.position(topic); ; ) {
      const page = await this.log.read(TOPICS.runs, from, PAGE);
      if (page.length === 0) return out;
      for (const r of page)
        if (copyTopicOf(r.headers?.[TYPE_HEADER] ?? '') === topic)
          out.push(await this.events.decode(TOPICS.runs, r.value));
      from = (page.at(-1) as StoredRecord).offset + 1;
    }
  }

  /**
   * Publishes alerts (EventStore.appendAlerts) where the stops topic ends when it is read, so the
   * source they carry is the copy's right before them even when another process copies meanwhile
   * (its copies land first; the alerts are then published after them).
   */
  async publishAlerts(records: readonly RecordedEvent[]): Promise<void> {
    if (records.length === 0) return;
    for (;;) {
      const { end, last } = await topicTail(this.log, TOPICS.stops);
      try {
        await this.log.appendAfter(TOPICS.stops, end, this.events.alertRecords(records, last));
        return;
      } catch (e) {
        if (!(e instanceof LoopguardError && e.code === 'conflict')) throw e;
      }
    }
  }

  private async project(): Promise<void> {
    this.queued = undefined;
    for (const topic of COPY_TOPICS) {
      let from = this.next.get(topic);
      let end = this.end.get(topic);
      if (from === undefined || end === undefined) ({ from, end } = await this.moveTo(topic));
      for (;;) {
        const page = await this.log.read(TOPICS.runs, from, PAGE);
        if (page.length === 0) break;
        const copies = [];
        for (const r of page) {
          if (copyTopicOf(r.headers?.[TYPE_HEADER] ?? '') !== topic) continue;
          copies.push(this.events.copyRecord(await this.events.decode(TOPICS.runs, r.value), r.offset));
        }
        if (copies.length > 0) {
          try {
            await this.log.appendAfter(topic, end, copies);
          } catch (e) {
            if (!(e instanceof LoopguardError && e.code === 'conflict')) throw e;
            // Another process copied (or published an alert) first: go on after what it wrote.
            ({ from, end } = await this.moveTo(topic));
            continue;
          }
          end += copies.length;
        }
        from = (page.at(-1) as StoredRecord).offset + 1;
        this.next.set(topic, from);
        this.end.set(topic, end);
      }
      this.onStep(topic === TOPICS.stops ? 'stops-published' : 'ledger-published');
    }
  }

  /** Reads where `topic`'s copies go on from, and takes it as this projector's position. */
  private async moveTo(topic: CopyTopic): Promise<{ from: number; end: number }> {
    const at = await this.position(topic);
    this.next.set(topic, at.from);
    this.end.set(topic, at.end);
    return at;
  }

  /** Where `topic` ends, and the runs offset its copies go on from: both read at that one end. */
  private async position(topic: CopyTopic): Promise<{ from: number; end: number }> {
    const { end, last } = await topicTail(this.log, topic);
    return { from: await this.resumeAfter(topic, last), end };
  }

  /**
   * After the runs record `last` (the copy topic's last record) came from; 0 for an empty topic. A
   * copy made without a projector (EventStore.append) has no source: its runs record is found by key.
   */
  private async resumeAfter(topic: CopyTopic, last: StoredRecord | undefined): Promise<number> {
    if (last === undefined) return 0;
    const source = last.headers?.[SOURCE_HEADER];
    if (source !== undefined) return Number(source) + 1;
    const copied = await this.events.decode(topic, last.value);
    const [original] = await this.log.readKey(TOPICS.runs, copied.runId, copied.seq - 1);
    // A copy of nothing in runs: start at the end rather than copy history a second time.
    return original === undefined ? this.log.endOffset(TOPICS.runs) : original.offset + 1;
  }
}
