/**
 * Public face of the log module: the in-memory and embedded logs and the event store over them.
 * The Kafka adapters have their own public face, log/kafka/index.ts.
 */
export { EmbeddedLog } from './embedded/embedded-log.js';
export { TOPICS } from './event-log.js';
export { EventStore } from './event-store.js';
export { MemoryLog } from './memory-log.js';
