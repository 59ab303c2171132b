/** Public face of the log module: the EventLog port, its in-memory and embedded adapters, the event store. */
export { CopyProjector, type ProjectorStep } from './copy-projector.js';
export { DEFAULT_DATA_DIR, EmbeddedLog, type EmbeddedLogOptions } from './embedded/embedded-log.js';
export { SqliteSchemaStore } from './embedded/sqlite-schema-store.js';
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
export { isKeyedLog, type KeyedLog } from './keyed-log.js';
export { LogRunStream } from './log-run-stream.js';
export { MemoryLog } from './memory-log.js';
export { type LoadedRun, type RunStream, streamConflict } from './run-stream.js';
export { runStreamOf } from './run-stream-of.js';
