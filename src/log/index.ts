/**
 * Public face of the log module: the EventLog, the in-memory and embedded adapters of the ports
 * (src/ports: the store port, the ledger, the schema store) and the event store.
 */
export {
  type AppendToStreamOptions,
  type AppendToStreamResult,
  type LoadedRun,
  type RunStream,
  streamConflict,
} from '../ports/run-stream.js';
export { CopyProjector, type ProjectorStep } from './copy-projector.js';
export { DEFAULT_DATA_DIR, EmbeddedLog, type EmbeddedLogOptions } from './embedded/embedded-log.js';
export { SqliteLedger } from './embedded/sqlite-ledger.js';
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
export type { KeyedLog } from './keyed-log.js';
export { LogRunStream } from './log-run-stream.js';
export { MemoryLedger } from './memory-ledger.js';
export { MemoryLog } from './memory-log.js';
export type { RunLog } from './run-log.js';
