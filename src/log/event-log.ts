/**
 * The EventLog port: append-only topics of keyed records with dense offsets from 0. Adapters: an
 * in-memory one (tests, evaluation), the embedded SQLite store (default) and Kafka. All of them pass
 * the same contract suite (test/log-contract.ts).
 */
import type { RecordedEvent } from '../domain/events.js';

export const TOPICS = {
  runs: 'loopguard.runs',
  stops: 'loopguard.stops',
  ledger: 'loopguard.ledger',
  dlq: 'loopguard.dlq',
  /** Kafka only: run state at a seq, keyed by run id, compacted (derived from runs). */
  snapshots: 'loopguard.snapshots',
} as const;
export type TopicName = (typeof TOPICS)[keyof typeof TOPICS];

export interface LogRecord {
  readonly key: string;
  readonly value: Buffer;
  readonly headers?: Record<string, string>;
  /**
   * The event `value` encodes, where the writer has it at hand (EventStore.runRecord). Never
   * stored or sent: the embedded log, which keeps each run's row in the transaction of its appends
   * (embedded/run-rows.ts), reads it instead of decoding `value` again.
   */
  readonly event?: RecordedEvent;
}

export interface StoredRecord extends LogRecord {
  readonly topic: string;
  readonly offset: number;
}

export interface EventLog {
  /** Resolves only once the records are durable (group commit); their offsets, in order. */
  append(topic: string, records: readonly LogRecord[]): Promise<number[]>;
  /** Records with offset >= fromOffset, in order; at most maxRecords (default: all up to the end). */
  read(topic: string, fromOffset: number, maxRecords?: number): Promise<StoredRecord[]>;
  /**
   * Calls onRecord for every record from fromOffset on, including records appended later, one at a
   * time and in order. Resolves when signal aborts; rejects if onRecord throws.
   */
  follow(
    topic: string,
    fromOffset: number,
    onRecord: (r: StoredRecord) => Promise<void> | void,
    signal: AbortSignal,
  ): Promise<void>;
  /** The offset the next appended record will get (0 for an empty or unknown topic). */
  endOffset(topic: string): Promise<number>;
  close(): Promise<void>;
}

/** Kafka's character set for topic names, which every adapter enforces alike. */
export const TOPIC_NAME = /^[A-Za-z0-9._-]{1,249}$/;
