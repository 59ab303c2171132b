/**
 * The per-run stream over a local log that indexes records by key (memory, embedded). A run's
 * events are the records keyed by its id on the runs topic, so the key's record count is the run's
 * last seq: reading from a seq is an index lookup, and the expected-seq check is the log's own
 * conditional append. A CopyProjector then derives the stops and ledger copies.
 */
import { LoopguardError } from '../domain/errors.js';
import type { RecordedEvent } from '../domain/events.js';
import {
  type AppendToStreamOptions,
  type AppendToStreamResult,
  checkStreamAppend,
  checkStreamRead,
  type LoadedRun,
  type RunStream,
  streamConflict,
} from '../ports/run-stream.js';
import { CopyProjector, type ProjectorStep } from './copy-projector.js';
import { TOPICS } from './event-log.js';
import { copyTopicOf, type EventStore } from './event-store.js';
import type { KeyedLog } from './keyed-log.js';

/** readAll's pages: about PAGE_BYTES of values each (the first, of records of unknown size, FIRST_PAGE records). */
const PAGE_BYTES = 1 << 20;
const FIRST_PAGE = 256;
const MAX_PAGE = 4096;

export class LogRunStream implements RunStream {
  private readonly projector: CopyProjector;
  /** Sub-agents by parent, from the run starts read so far (up to `startsRead`). */
  private readonly kids = new Map<string, string[]>();
  private startsRead = 0;
  /** The copy pass last started without waiting for it (never rejects). */
  private copying: Promise<void> = Promise.resolve();

  constructor(
    private readonly events: EventStore,
    private readonly log: KeyedLog,
    private readonly onStep: (step: ProjectorStep | 'runs-durable') => void = () => {},
  ) {
    this.projector = new CopyProjector(log, events, onStep);
  }

  async readStream(runId: string, fromSeq = 1): Promise<RecordedEvent[]> {
    checkStreamRead(runId, fromSeq);
    const records = await this.log.readKey(TOPICS.runs, runId, fromSeq - 1);
    const out: RecordedEvent[] = [];
    for (const r of records) out.push(await this.events.decode(TOPICS.runs, r.value));
    return out;
  }

  /**
   * A local log refuses a losing writer's batch when it is written, so every record counts. Read
   * as values a page at a time and decoded without waiting once the schema is known: a rebuild
   * reads every record, and a record object or a promise each costs about what decoding it does.
   */
  async readAll(apply: (event: RecordedEvent) => void): Promise<number> {
    let n = 0;
    let limit = FIRST_PAGE;
    for (let next = 0; ; ) {
      const page = await this.log.readValues(TOPICS.runs, next, limit);
      if (page.values.length === 0) return n;
      let bytes = 0;
      for (const v of page.values) {
        apply(this.events.decodeKnown(TOPICS.runs, v) ?? (await this.events.decode(TOPICS.runs, v)));
        bytes += v.length;
      }
      n += page.values.length;
      next = page.next;
      limit = Math.max(1, Math.min(MAX_PAGE, Math.floor((PAGE_BYTES * page.values.length) / bytes)));
    }
  }

  async appendToStream(
    runId: string,
    events: readonly RecordedEvent[],
    { expectedStreamVersion: expected, status }: AppendToStreamOptions,
  ): Promise<AppendToStreamResult> {
    checkStreamAppend(runId, expected, events);
    const records = events.map((e) => this.events.runRecord(e));
    const opts = status === undefined ? {} : { runStatus: status };
    const offsets = await this.log
      .appendKeyed(TOPICS.runs, runId, expected, records, opts)
      .catch((e: unknown) => {
        if (e instanceof LoopguardError && e.code === 'conflict')
          throw streamConflict(runId, expected, Number(e.details.actual));
        throw e;
      });
    this.onStep('runs-durable');
    // Stops and ledger copies are derived from the runs topic, wherever the last process stopped.
    const copies = events.filter((e) => copyTopicOf(e.event.type) !== null);
    if (copies.length > 0 || !this.projector.passed(offsets[0] as number, offsets.length)) {
      const pass = this.projector.catchUp();
      // A stop is copied before the append returns: alerting follows the stops topic, and a
      // process that exits right after a stop must not leave it to the next writer. The rest (a
      // side effect's ledger copies, other processes' records) is copied while the caller goes on:
      // awaited, it was one more fsync before every side effect ran. A pass that fails is redone
      // by the next one (the copy topic is its own progress); close waits for the last.
      if (copies.some((e) => copyTopicOf(e.event.type) === TOPICS.stops)) await pass;
      else this.copying = pass.catch(() => undefined);
    }
    return { nextExpectedStreamVersion: expected + events.length };
  }

  async load(runId: string): Promise<LoadedRun> {
    return { snapshot: null, events: await this.readStream(runId) };
  }

  /**
   * From the run starts alone (a run's parent is in its first event), and only those appended since
   * the last look: the cost follows the runs started, not every record of the log.
   */
  async childrenOf(runId: string): Promise<readonly string[]> {
    checkStreamRead(runId, 1);
    for (;;) {
      const page = await this.log.readRunStarts(this.startsRead, MAX_PAGE);
      if (page.values.length === 0) break;
      for (const v of page.values) {
        const { event } =
          this.events.decodeKnown(TOPICS.runs, v) ?? (await this.events.decode(TOPICS.runs, v));
        if (event.type !== 'RunStarted' || event.parentRunId === null) continue;
        const siblings = this.kids.get(event.parentRunId) ?? [];
        // Two looks at once may read one page twice.
        if (!siblings.includes(event.runId)) siblings.push(event.runId);
        this.kids.set(event.parentRunId, siblings);
      }
      this.startsRead = Math.max(this.startsRead, page.next);
    }
    return [...(this.kids.get(runId) ?? [])].sort();
  }

  /** The key index makes a run's events cheap to read: no snapshot needed. */
  snapshot(): void {}

  /** Waits for the copies being made; one that failed is made by the next writer of the data dir. */
  async close(): Promise<void> {
    await this.copying;
  }
}
