/**
 * An append-only EventLog over @confluentinc/kafka-javascript's KafkaJS-compatible API (librdkafka
 * inside), for the kafka-publish-confluent figure: the EventStore above it is unchanged, so the
 * records (Avro, Confluent framing, keys, headers, the stops/ledger copies) are byte for byte those
 * KafkaLog publishes; only the client differs. There is no AppendBatcher here: librdkafka batches
 * concurrent sends itself (linger.ms) and keeps up to 5 requests in flight with idempotence.
 *
 * The package is an optional dependency (it builds librdkafka from source at install), so it is
 * loaded at run time and typed here by the little of it this file uses.
 */
import { LoopguardError } from '../src/domain/errors.js';
import type { EventLog, LogRecord, StoredRecord } from '../src/log/event-log.js';

interface CkjsRecordMetadata {
  readonly partition: number;
  readonly offset?: string;
  readonly baseOffset?: string;
}

interface CkjsProducer {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  send(record: {
    topic: string;
    messages: { key: string; value: Buffer; headers?: Record<string, string> }[];
  }): Promise<CkjsRecordMetadata[]>;
}

interface CkjsKafka {
  producer(config: Record<string, unknown>): CkjsProducer;
}

type CkjsKafkaCtor = new (config: Record<string, unknown>) => CkjsKafka;

const PACKAGE = '@confluentinc/kafka-javascript';

/** The KafkaJS-compatible `Kafka` class, or why it cannot be had here. */
export async function loadConfluentKafka(): Promise<
  { Kafka: CkjsKafkaCtor; version: string } | { unavailable: string }
> {
  let mod: { KafkaJS?: { Kafka?: CkjsKafkaCtor }; librdkafkaVersion?: string; default?: unknown };
  try {
    // A variable specifier: the package is optional, so neither tsc nor the bundler may insist on it.
    const specifier: string = PACKAGE;
    mod = (await import(specifier)) as typeof mod;
  } catch (e) {
    const reason = e instanceof Error ? e.message.split('\n')[0] : String(e);
    return {
      unavailable: `${PACKAGE} is not installed or its native binding did not build (${reason}); it is an optional dependency: install with CKJS_LINKING=dynamic and Debian's zlib1g-dev libssl-dev libzstd-dev libsasl2-dev liblz4-dev libcurl4-openssl-dev`,
    };
  }
  const cjs = (mod.default ?? mod) as typeof mod;
  const Kafka = cjs.KafkaJS?.Kafka ?? mod.KafkaJS?.Kafka;
  if (Kafka === undefined) return { unavailable: `${PACKAGE} has no KafkaJS.Kafka export` };
  return { Kafka, version: cjs.librdkafkaVersion ?? 'unknown' };
}

export interface ConfluentLogOptions {
  readonly brokers: readonly string[];
  /** Logical topic name -> physical one (the same layout as the KafkaLog that created the topics). */
  readonly physicalName: (topic: string) => string;
  readonly lingerMs: number;
}

export class ConfluentLog implements EventLog {
  private constructor(
    private readonly producer: CkjsProducer,
    private readonly physicalName: (topic: string) => string,
  ) {}

  /** An idempotent producer (acks=all) with the given linger; the topics must already exist. */
  static async connect(Kafka: CkjsKafkaCtor, opts: ConfluentLogOptions): Promise<ConfluentLog> {
    const kafka = new Kafka({
      kafkaJS: { clientId: 'loopguard-bench-confluent', brokers: [...opts.brokers], logLevel: 0 },
    });
    const producer = kafka.producer({
      kafkaJS: { idempotent: true, acks: -1, allowAutoTopicCreation: false },
      'linger.ms': opts.lingerMs,
    });
    await producer.connect();
    return new ConfluentLog(producer, opts.physicalName);
  }

  async append(topic: string, records: readonly LogRecord[]): Promise<number[]> {
    const meta = await this.producer.send({
      topic: this.physicalName(topic),
      messages: records.map((r) =>
        r.headers ? { key: r.key, value: r.value, headers: r.headers } : { key: r.key, value: r.value },
      ),
    });
    // Topics of the bench have one partition, so the batch's records are consecutive from its base.
    const base = Number(meta[0]?.baseOffset ?? meta[0]?.offset ?? Number.NaN);
    return records.map((_, i) => base + i);
  }

  read(): Promise<StoredRecord[]> {
    return Promise.reject(unsupported('read'));
  }

  follow(): Promise<void> {
    return Promise.reject(unsupported('follow'));
  }

  endOffset(): Promise<number> {
    return Promise.reject(unsupported('endOffset'));
  }

  close(): Promise<void> {
    return this.producer.disconnect();
  }
}

/** A bench that reads this log is a bug in the bench: the log is append-only. */
function unsupported(op: string): LoopguardError {
  return new LoopguardError('internal', `ConfluentLog is append-only (bench): no ${op}`);
}
