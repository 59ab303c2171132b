/** Public face of the log module: the EventLog port, its in-memory and embedded adapters, the event store. */
export { DEFAULT_DATA_DIR, EmbeddedLog, type EmbeddedLogOptions } from './embedded/embedded-log.js';
export {
  type EventLog,
  type LogRecord,
  type StoredRecord,
  TOPIC_NAME,
  TOPICS,
  type TopicName,
} from './event-log.js';
export { EventStore, type StoredEvent } from './event-store.js';
export * from './kafka/index.js';
export { MemoryLog } from './memory-log.js';
