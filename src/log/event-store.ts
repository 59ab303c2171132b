/**
 * Recorded events on top of an EventLog: every event goes to the runs topic keyed by run id (one
 * partition per run keeps its order); stops and ledger events are also published on their own
 * topics for subscribers that need only those.
 *
 * The runs topic is the source of truth. A run's writer (RunStream) appends to it only, and the
 * stops/ledger copies are derived from it by a projector (CopyProjector on local logs,
 * KafkaCopyProjector on Kafka), so no crash between two appends can lose a copy.
 */
import { LoopguardError } from '../domain/errors.js';
import type { RecordedEvent } from '../domain/events.js';
import { EventCodec } from '../events/codec.js';
import type { SchemaStore } from '../ports/schema-store.js';
import { type EventLog, type LogRecord, TOPICS } from './event-log.js';

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

type Topic = typeof TOPICS.runs | typeof TOPICS.stops | typeof TOPICS.ledger;
const PAGE = 500;

/**
 * Where a stops or ledger copy was made from by a projector: the runs offset (CopyProjector), or
 * `partition:offset` on Kafka's partitioned runs topic (KafkaCopyProjector).
 */
export const SOURCE_HEADER = 'loopguard.source';

/** The topic besides runs an event of this type is copied to, if any. */
export function copyTopicOf(type: string): typeof TOPICS.stops | typeof TOPICS.ledger | null {
  if (type === 'RunStopped') return TOPICS.stops;
  if (
    type === 'OperationClaimed' ||
    type === 'OperationCompleted' ||
    type === 'OperationInDoubt' ||
    type === 'OperationReleased'
  )
    return TOPICS.ledger;
  return null;
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
    const [runs, stops, ledger] = await Promise.all(
      [TOPICS.runs, TOPICS.stops, TOPICS.ledger].map((t) => EventCodec.create(store, subject(t))),
    );
    return new EventStore(
      log,
      {
        [TOPICS.runs]: runs as EventCodec,
        [TOPICS.stops]: stops as EventCodec,
        [TOPICS.ledger]: ledger as EventCodec,
      },
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
    await this.publishCopies(records);
  }

  /**
   * The runs-topic record of an event: keyed by run id, so one partition owns a run; its seq in a
   * header, so a reader can follow a run's stream without decoding the value.
   */
  runRecord(r: RecordedEvent, headers: Readonly<Record<string, string>> = {}): LogRecord {
    const rec = this.record(TOPICS.runs, r.runId, r);
    return { ...rec, headers: { ...rec.headers, [SEQ_HEADER]: String(r.seq), ...headers }, event: r };
  }

  /**
   * Publishes events that belong to no run (FleetLoopDetected) on the stops topic only, where
   * `loopguard alert` delivers them; keyed by their stream (`runId`), e.g. the loop signature.
   * They carry the source of the copy before them (-1: none yet), so a CopyProjector, which
   * resumes after the source of the topic's last record, goes on exactly where it would have.
   */
  async appendAlerts(records: readonly RecordedEvent[]): Promise<void> {
    if (records.length === 0) return;
    const end = await this.log.endOffset(TOPICS.stops);
    const last = end === 0 ? undefined : (await this.log.read(TOPICS.stops, end - 1, 1))[0];
    const source = last === undefined ? '-1' : last.headers?.[SOURCE_HEADER];
    await this.log.append(
      TOPICS.stops,
      records.map((r) => {
        const rec = this.record(TOPICS.stops, r.runId, r);
        return source === undefined ? rec : { ...rec, headers: { ...rec.headers, [SOURCE_HEADER]: source } };
      }),
    );
  }

  /**
   * The record of `r` on its copy topic (stops: keyed by run id; ledger: by operation key), with
   * the runs offset it was copied from when a projector made it.
   */
  copyRecord(r: RecordedEvent, source?: number | string): LogRecord {
    const topic = copyTopicOf(r.event.type);
    if (topic === null) throw new LoopguardError('internal', `${r.event.type} has no copy topic`);
    const rec = this.record(topic, topic === TOPICS.stops ? r.runId : operationKey(r), r);
    return source === undefined
      ? rec
      : { ...rec, headers: { ...rec.headers, [SOURCE_HEADER]: String(source) } };
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
    return this.follow(TOPICS.stops, fromOffset, on, signal);
  }

  follow(
    topic: Topic,
    fromOffset: number,
    on: (e: RecordedEvent, offset: number) => Promise<void> | void,
    signal: AbortSignal,
  ): Promise<void> {
    const codec = this.codecs[topic];
    return this.log.follow(topic, fromOffset, async (r) => on(await codec.decode(r.value), r.offset), signal);
  }

  /** Copies of the stops and ledger events on their own topics, once the runs topic has them. */
  private async publishCopies(records: readonly RecordedEvent[]): Promise<void> {
    const stops = records.filter((r) => copyTopicOf(r.event.type) === TOPICS.stops);
    const ledger = records.filter((r) => copyTopicOf(r.event.type) === TOPICS.ledger);
    await Promise.all([
      stops.length > 0
        ? this.log.append(
            TOPICS.stops,
            stops.map((r) => this.copyRecord(r)),
          )
        : [],
      ledger.length > 0
        ? this.log.append(
            TOPICS.ledger,
            ledger.map((r) => this.copyRecord(r)),
          )
        : [],
    ]);
  }

  private record(topic: Topic, key: string, r: RecordedEvent): LogRecord {
    return { key, value: this.codecs[topic].encode(r), headers: { [TYPE_HEADER]: r.event.type } };
  }
}

function operationKey(r: RecordedEvent): string {
  return 'operationKey' in r.event ? (r.event.operationKey ?? r.runId) : r.runId;
}

async function* events(entries: AsyncIterable<StoredEvent>): AsyncIterable<RecordedEvent> {
  for await (const e of entries) yield e.event;
}
