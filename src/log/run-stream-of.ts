import { LoopguardError } from '../domain/errors.js';
import type { EventStore } from './event-store.js';
import { KafkaLog } from './kafka/kafka-log.js';
import { KafkaRunStream } from './kafka/kafka-run-stream.js';
import { isKeyedLog } from './keyed-log.js';
import { LogRunStream } from './log-run-stream.js';
import type { RunStream } from './run-stream.js';

/** The per-run stream over the event store's log, whichever adapter it is. Keep one per log: the Kafka one remembers run heads. */
export function runStreamOf(events: EventStore): RunStream {
  if (events.log instanceof KafkaLog) return new KafkaRunStream(events, events.log);
  if (isKeyedLog(events.log)) return new LogRunStream(events, events.log);
  throw new LoopguardError(
    'unsupported_log',
    'this EventLog has no per-run streams: it needs readKey/appendKeyed (KeyedLog) or to be a KafkaLog',
  );
}
