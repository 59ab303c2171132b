import { MemorySchemaStore } from '../../src/events/memory-schema-store.js';
import { EventStore } from '../../src/log/event-store.js';
import { MemoryLog } from '../../src/log/memory-log.js';
import type { RunStream } from '../../src/ports/run-stream.js';

/** A fresh in-memory log's store port: what a test of one writer needs. */
export async function memoryStream(): Promise<RunStream> {
  const log = new MemoryLog();
  return log.runStream(await EventStore.create(log, new MemorySchemaStore()));
}
