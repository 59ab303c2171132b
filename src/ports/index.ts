/**
 * The ports: a run's stream, the idempotency ledger and the schema store, each with an in-memory,
 * an embedded and a Kafka adapter. Ports import the domain only; adapters import ports, never the
 * other way round.
 */
export * from './ledger.js';
export * from './run-stream.js';
export * from './schema-store.js';
