/**
 * Recorded events on top of an EventLog: every event goes to the runs topic keyed by run id (one
 * partition per run keeps its order); stops and ledger events are also copied to their own topics
 * for subscribers that need only those. The runs topic is the source of truth: a run's writer
 * (RunStream) appends to it only, and a projector (CopyProjector, KafkaCopyProjector) derives the
 * copies, so no crash between two appends can lose one.
 */
import { LoopguardError } from '../domain/errors.js';
import type { RecordedEvent } from '../domain/events.js';
import { EventCodec } from '../events/codec.js';
import type { SchemaStore } from '../ports/schema-store.js';
import { type EventLog, type LogRecord, type StoredRecord, TOPICS } from './event-log.js';

export interface EventStoreOptions {
  /**
   * The schema-registry subject of a logical topic. `<topic>-value` by default; an adapter that
   * renames topics (a Kafka prefix) passes the physical name, so the subject follows the real
   * topic as Confluent's TopicNameStrategy expects.
   */
  readonly subjectFor?: (topic: string) => string;
}

export interface StoredEvent {
  readonly offset: number;
  readonly event: RecordedEvent;
}

/** The header that carries a runs record's seq, so readers can follow a run without decoding. */
export const SEQ_HEADER = 'loopguard.seq';
/** The header that names a record's event type (every topic's records carry it). */
export const TYPE_HEADER = 'loopguard.type';
/**
 * The parent a sub-agent's RunStarted names, so a reader that folds only headers (the Kafka run
 * stream's follower) knows a run's sub-agents without decoding every record.
 */
export const PARENT_HEADER = 'loopguard.parent';

type Topic = typeof TOPICS.runs | typeof TOPICS.stops | typeof TOPICS.ledger;
const PAGE = 500;

/**
 * Where a stops or ledger copy was made from by a projector: the runs offset (CopyProjector), or
 * `partition:offset` on Kafka's partitioned runs topic (KafkaCopyProjector).
 */
export const SOURCE_HEADER = 'loopguard.source';

export type CopyTopic = typeof TOPICS.stops | typeof TOPICS.ledger;
const COPY_TOPICS = new Map<string, CopyTopic>([
  ['RunStopped', TOPICS.stops],
  ['OperationClaimed', TOPICS.ledger],
  ['OperationCompleted', TOPICS.ledger],
  ['OperationInDoubt', TOPICS.ledger],
  ['OperationReleased', TOPICS.ledger],
]);

/** The topic besides runs an event of this type is copied to, if any. */
export const copyTopicOf = (type: string): CopyTopic | null => COPY_TOPICS.get(type) ?? null;

/** Where `topic` ends, and its last record if it has any (read at that end). */
export async function topicTail(
  log: EventLog,
  topic: string,
): Promise<{ readonly end: number; readonly last: StoredRecord | undefined }> {
  const end = await log.endOffset(topic);
  return { end, last: end === 0 ? undefined : (await log.read(topic, end - 1, 1))[0] };
}

export class EventStore {
  private constructor(
    readonly log: EventLog,
    private readonly codecs: Readonly<Record<Topic, EventCodec>>,
    /** Where this store's schemas live, and the subject of a topic: for adapters with values of their own. */
    readonly schemas: SchemaStore,
    readonly subjectFor: (topic: string) => string,
  ) {}

  /** Registers the envelope schema under `<topic>-value` for the runs, stops and ledger topics. */
  static async create(log: EventLog, store: SchemaStore, opts: EventStoreOptions = {}): Promise<EventStore> {
    const subject = opts.subjectFor ?? ((t: string) => `${t}-value`);
    const topics = [TOPICS.runs, TOPICS.stops, TOPICS.ledger];
    const codecs = await Promise.all(topics.map((t) => EventCodec.create(store, subject(t))));
    return new EventStore(
      log,
      Object.fromEntries(topics.map((t, i) => [t, codecs[i]])) as Record<Topic, EventCodec>,
      store,
      subject,
    );
  }

  /**
   * Resolves once every record is durable on every topic it belongs to. Unconditional: a run's
   * writer goes through its RunStream instead, which refuses a second writer and leaves the copies
   * to a projector (this path copies itself, so a crash between the appends can lose a copy).
   */
  async append(records: readonly RecordedEvent[]): Promise<void> {
    if (records.length === 0) return;
    await this.log.append(
      TOPICS.runs,
      records.map((r) => this.runRecord(r)),
    );
    // Copies of the stops and ledger events on their own topics, once the runs topic has them.
    await Promise.all(
      [TOPICS.stops, TOPICS.ledger].map((topic) => {
        const copies = records.filter((r) => copyTopicOf(r.event.type) === topic);
        return copies.length > 0
          ? this.log.append(
              topic,
              copies.map((r) => this.copyRecord(r)),
            )
          : [];
      }),
    );
  }

  /**
   * The runs-topic record of an event: keyed by run id, so one partition owns a run; its seq in a
   * header, so a reader can follow a run's stream without decoding the value.
   */
  runRecord(r: RecordedEvent, headers: Readonly<Record<string, string>> = {}): LogRecord {
    const value = this.codecs[TOPICS.runs].encode(r);
    const e = r.event;
    const parent: Record<string, string> =
      e.type === 'RunStarted' && e.parentRunId !== null ? { [PARENT_HEADER]: e.parentRunId } : {};
    return {
      key: r.runId,
      value,
      headers: { [TYPE_HEADER]: e.type, [SEQ_HEADER]: String(r.seq), ...parent, ...headers },
      event: r,
    };
  }

  /**
   * Publishes events that belong to no run (FleetLoopDetected) on the stops topic only, where
   * `loopguard alert` delivers them; keyed by their stream (`runId`), e.g. the loop signature.
   * They carry the source of the copy before them (-1: none yet), so a CopyProjector, which
   * resumes after the source of the topic's last record, goes on exactly where it would have.
   */
  async appendAlerts(records: readonly RecordedEvent[]): Promise<void> {
    if (records.length === 0) return;
    await this.log.append(
      TOPICS.stops,
      this.alertRecords(records, (await topicTail(this.log, TOPICS.stops)).last),
    );
  }

  /** The stops-topic records of alerts published after `last`, the topic's last record. */
  alertRecords(records: readonly RecordedEvent[], last: StoredRecord | undefined): LogRecord[] {
    const source = last === undefined ? '-1' : last.headers?.[SOURCE_HEADER];
    return records.map((r) => this.record(TOPICS.stops, r.runId, r, source));
  }

  /**
   * The record of `r` on its copy topic (stops: keyed by run id; ledger: by operation key), with
   * the runs offset it was copied from when a projector made it.
   */
  copyRecord(r: RecordedEvent, source?: number | string): LogRecord {
    const topic = copyTopicOf(r.event.type);
    if (topic === null) throw new LoopguardError('internal', `${r.event.type} has no copy topic`);
    return this.record(topic, topic === TOPICS.stops ? r.runId : operationKey(r), r, source?.toString());
  }

  /** Decodes one record value of a topic, for readers that fetch records themselves. */
  decode(topic: Topic, value: Buffer): Promise<RecordedEvent> {
    return this.codecs[topic].decode(value);
  }

  /**
   * Decodes without waiting when the record's schema is already known (almost always, after the
   * first record); undefined when it must be fetched first, by `decode`.
   */
  decodeKnown(topic: Topic, value: Buffer): RecordedEvent | undefined {
    const codec = this.codecs[topic];
    return codec.knows(value) ? codec.decodeSync(value) : undefined;
  }

  readRuns(fromOffset = 0): AsyncIterable<RecordedEvent> {
    return events(this.entries(TOPICS.runs, fromOffset));
  }

  readStops(fromOffset = 0): AsyncIterable<RecordedEvent> {
    return events(this.entries(TOPICS.stops, fromOffset));
  }

  readLedger(fromOffset = 0): AsyncIterable<RecordedEvent> {
    return events(this.entries(TOPICS.ledger, fromOffset));
  }

  /** Events with their offsets, up to the end at the time each page is read. */
  async *entries(topic: Topic, fromOffset = 0): AsyncIterable<StoredEvent> {
    let next = fromOffset;
    for (;;) {
      const page = await this.log.read(topic, next, PAGE);
      if (page.length === 0) return;
      for (const r of page) yield { offset: r.offset, event: await this.codecs[topic].decode(r.value) };
      next = (page.at(-1)?.offset ?? next) + 1;
    }
  }

  followStops(
    fromOffset: number,
    on: (e: RecordedEvent, offset: number) => Promise<void> | void,
    signal: AbortSignal,
  ): Promise<void> {
    const codec = this.codecs[TOPICS.stops];
    return this.log.follow(
      TOPICS.stops,
      fromOffset,
      async (r) => on(await codec.decode(r.value), r.offset),
      signal,
    );
  }

  /** `source`: where a projector copied it from (SOURCE_HEADER). */
  private record(topic: Topic, key: string, r: RecordedEvent, source?: string): LogRecord {
    const headers: Record<string, string> = { [TYPE_HEADER]: r.event.type };
    if (source !== undefined) headers[SOURCE_HEADER] = source;
    return { key, value: this.codecs[topic].encode(r), headers };
  }
}

function operationKey(r: RecordedEvent): string {
  return 'operationKey' in r.event ? (r.event.operationKey ?? r.runId) : r.runId;
}

async function* events(entries: AsyncIterable<StoredEvent>): AsyncIterable<RecordedEvent> {
  for await (const e of entries) yield e.event;
}
