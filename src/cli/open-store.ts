import { join } from 'node:path';
import { FileSchemaStore } from '../events/index.js';
import { DEFAULT_DATA_DIR, EmbeddedLog, type EventLog, EventStore } from '../log/index.js';

export interface OpenStore {
  readonly events: EventStore;
  readonly where: string;
  close(): Promise<void>;
}

/** The embedded log in a data dir, with its file schema store: the default, no server needed. */
export async function openEmbeddedStore(dataDir: string = DEFAULT_DATA_DIR): Promise<OpenStore> {
  const log: EventLog = await EmbeddedLog.open(dataDir);
  const events = await EventStore.create(log, new FileSchemaStore(join(dataDir, 'schemas')));
  return { events, where: dataDir, close: () => log.close() };
}
