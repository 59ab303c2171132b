/**
 * Recorded events on top of an EventLog: every event goes to the runs topic keyed by run id (one
 * partition per run keeps its order); stops and ledger events are also published on their own
 * topics for subscribers that need only those.
 *
 * The three appends are not one transaction. The runs topic is written first and is the source of
 * truth; if a crash falls between it and the others, the stops/ledger copies can be rebuilt from
 * runs (projections replay runs anyway).
 */
import type { RecordedEvent } from '../domain/events.js';
import { EventCodec } from '../events/codec.js';
import type { SchemaStore } from '../events/schema-store.js';
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

type Topic = typeof TOPICS.runs | typeof TOPICS.stops | typeof TOPICS.ledger;
const PAGE = 500;

const isLedgerEvent = (e: RecordedEvent): boolean =>
  e.event.type === 'OperationClaimed' ||
  e.event.type === 'OperationCompleted' ||
  e.event.type === 'OperationInDoubt' ||
  e.event.type === 'OperationReleased';

export class EventStore {
  private constructor(
    readonly log: EventLog,
    private readonly codecs: Readonly<Record<Topic, EventCodec>>,
  ) {}

  /** Registers the envelope schema under `<topic>-value` for the runs, stops and ledger topics. */
  static async create(log: EventLog, store: SchemaStore, opts: EventStoreOptions = {}): Promise<EventStore> {
    const subject = opts.subjectFor ?? ((t: string) => `${t}-value`);
    const [runs, stops, ledger] = await Promise.all(
      [TOPICS.runs, TOPICS.stops, TOPICS.ledger].map((t) => EventCodec.create(store, subject(t))),
    );
    return new EventStore(log, {
      [TOPICS.runs]: runs as EventCodec,
      [TOPICS.stops]: stops as EventCodec,
      [TOPICS.ledger]: ledger as EventCodec,
    });
  }

  /** Resolves once every record is durable on every topic it belongs to. */
  async append(records: readonly RecordedEvent[]): Promise<void> {
    if (records.length === 0) return;
    await this.log.append(
      TOPICS.runs,
      records.map((r) => this.record(TOPICS.runs, r.runId, r)),
    );
    const stops = records.filter((r) => r.event.type === 'RunStopped');
    const ledger = records.filter(isLedgerEvent);
    await Promise.all([
      stops.length > 0
        ? this.log.append(
            TOPICS.stops,
            stops.map((r) => this.record(TOPICS.stops, r.runId, r)),
          )
        : [],
      ledger.length > 0
        ? this.log.append(
            TOPICS.ledger,
            ledger.map((r) => this.record(TOPICS.ledger, operationKey(r), r)),
          )
        : [],
    ]);
  }

  /**
   * Publishes events that belong to no run (FleetLoopDetected) on the stops topic only, where
   * `loopguard alert` delivers them; keyed by their stream (`runId`), e.g. the loop signature.
   */
  async appendAlerts(records: readonly RecordedEvent[]): Promise<void> {
    if (records.length === 0) return;
    await this.log.append(
      TOPICS.stops,
      records.map((r) => this.record(TOPICS.stops, r.runId, r)),
    );
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

  private record(topic: Topic, key: string, r: RecordedEvent): LogRecord {
    return { key, value: this.codecs[topic].encode(r), headers: { 'loopguard.type': r.event.type } };
  }
}

function operationKey(r: RecordedEvent): string {
  return 'operationKey' in r.event ? (r.event.operationKey ?? r.runId) : r.runId;
}

async function* events(entries: AsyncIterable<StoredEvent>): AsyncIterable<RecordedEvent> {
  for await (const e of entries) yield e.event;
}
