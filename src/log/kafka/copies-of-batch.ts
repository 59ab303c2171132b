/**
 * The stops and ledger copies one batch of runs records calls for (KafkaCopyProjector's transform
 * step), by physical topic. A record counts only by the batch rule every run-stream reader applies
 * (run-batch-fold.ts), folded into `heads` as it goes; records of unconditional appends (no batch
 * header) publish their own copies and are skipped; a record that can never be decoded goes to the
 * dead-letter topic instead of its copy.
 */
import type { KafkaMessage } from 'kafkajs';
import type { RecordedEvent } from '../../domain/events.js';
import { type LogRecord, TOPICS } from '../event-log.js';
import { copyTopicOf, type EventStore } from '../event-store.js';
import { deadLetterCause, deadLetterHeaders } from './decoding-consumer.js';
import { headersToStrings } from './kafka-error.js';
import type { KafkaLog } from './kafka-log.js';
import { BATCH_HEADER, foldInto, type RunHead } from './run-batch-fold.js';

/** A record to send in a transaction: a log record's key, value and headers. */
export type OutMessage = Required<Pick<LogRecord, 'key' | 'value' | 'headers'>>;

export interface BatchSource {
  readonly events: EventStore;
  readonly log: KafkaLog;
  /** The physical runs topic and the partition the batch is from. */
  readonly runsTopic: string;
  readonly partition: number;
}

export async function copiesOfBatch(
  src: BatchSource,
  messages: readonly KafkaMessage[],
  heads: Map<string, RunHead>,
): Promise<Map<string, OutMessage[]>> {
  const out = new Map<string, OutMessage[]>();
  const add = (topic: string, m: OutMessage): void => {
    const name = src.log.physicalName(topic);
    out.set(name, [...(out.get(name) ?? []), m]);
  };
  for (const m of messages) {
    const key = m.key?.toString() ?? '';
    const headers = headersToStrings(m.headers) ?? {};
    if (foldInto(heads, key, headers) === null) continue;
    const topic = copyTopicOf(headers['loopguard.type'] ?? '');
    if (topic === null || headers[BATCH_HEADER] === undefined) continue;
    const value = m.value ?? Buffer.alloc(0);
    let event: RecordedEvent;
    try {
      event = src.events.decodeKnown(TOPICS.runs, value) ?? (await src.events.decode(TOPICS.runs, value));
    } catch (e) {
      // A registry briefly down is retried with the batch; a record that can never be decoded
      // cannot be copied, and must neither stop the copies of every later run nor vanish.
      const cause = deadLetterCause(e);
      if (cause === undefined) throw e;
      const why = { code: cause.code, reason: `no ${topic} copy: ${cause.reason}` };
      add(TOPICS.dlq, {
        key,
        value,
        headers: deadLetterHeaders(why, src.runsTopic, src.partition, m.offset),
      });
      continue;
    }
    const rec = src.events.copyRecord(event, `${src.partition}:${m.offset}`);
    add(topic, { key: rec.key, value: rec.value, headers: { ...rec.headers } });
  }
  return out;
}
