import { join } from 'node:path';
import { FileSchemaStore } from '../events/index.js';
import {
  DEFAULT_DATA_DIR,
  EmbeddedLog,
  type EventLog,
  EventStore,
  type RunStream,
  runStreamOf,
} from '../log/index.js';
import type { Projections } from '../projections/index.js';
import { rebuildProjections } from './rebuild-command.js';

/** A log the commands read and write, whichever adapter is behind it. */
export interface OpenStore {
  readonly events: EventStore;
  /** The runs' streams: how a command records a run (a run id already there is a conflict). */
  readonly stream: RunStream;
  /** Where the events live, for messages: a data dir, or brokers and topics. */
  readonly where: string;
  /** Every projection, folded from the runs topic from its first record. */
  rebuild(onProgress?: (n: number) => void): Promise<Projections>;
  /** Run ids already in the log: a second recording of one run would corrupt its history. */
  knownRunIds(): Promise<Set<string>>;
  close(): Promise<void>;
}

/**
 * The embedded log in a data dir, with its file schema store: the default, no server needed.
 * `readOnly` for commands that only read: nothing in the dir is created or written, and a dir
 * that does not exist is an error rather than a new empty log.
 */
export async function openEmbeddedStore(
  dataDir: string = DEFAULT_DATA_DIR,
  opts: { readonly readOnly?: boolean } = {},
): Promise<OpenStore> {
  const readOnly = opts.readOnly ?? false;
  const log: EventLog = await EmbeddedLog.open(dataDir, { readOnly });
  const events = await EventStore.create(log, new FileSchemaStore(join(dataDir, 'schemas'), { readOnly }));
  const stream = runStreamOf(events);
  return {
    events,
    stream,
    where: `data dir ${dataDir}`,
    rebuild: (onProgress) => rebuildProjections(events.readRuns(0), onProgress),
    knownRunIds: async () => {
      const ids = new Set<string>();
      for await (const e of events.readRuns(0)) ids.add(e.runId);
      return ids;
    },
    close: async () => {
      await stream.close();
      await log.close();
    },
  };
}
