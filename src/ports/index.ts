/**
 * The ports, in one place: the store port (a run's stream), the idempotency ledger and the
 * schema store. Each has an in-memory adapter (MemoryLog's stream, MemoryLedger,
 * MemorySchemaStore), an embedded one and a Kafka one, and one contract suite run against all.
 * Ports import the domain only; adapters import ports, never the other way round.
 */
export * from './ledger.js';
export * from './run-stream.js';
export * from './schema-store.js';
