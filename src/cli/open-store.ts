import { LoopguardError, type RecordedEvent } from '../domain/index.js';
// Each from its own file: the log barrel also holds the Kafka adapters (kafkajs, an optional package).
import { CopyProjector } from '../log/copy-projector.js';
import { DEFAULT_DATA_DIR, EmbeddedLog } from '../log/embedded/embedded-log.js';
import type { RunRowFilters } from '../log/embedded/filtered-runs.js';
import type { RunIndexPage } from '../log/embedded/run-index.js';
import { SqliteSchemaStore } from '../log/embedded/sqlite-schema-store.js';
import { TOPICS } from '../log/event-log.js';
import { EventStore } from '../log/event-store.js';
import type { RunStream } from '../ports/run-stream.js';
import type { Projections } from '../projections/index.js';
import { chooseSecretKey } from '../runtime/secret-key.js';
import type { FilteredRunEvents } from '../timeline/run-list-index.js';
import { rebuildFromStream } from './rebuild-from-stream.js';

/** A log the commands read and write, whichever adapter is behind it. */
export interface OpenStore {
  readonly events: EventStore;
  /** The runs' streams: how a command records a run (a run id already there is a conflict). */
  readonly stream: RunStream;
  /** Where the events live, for messages: a data dir, or brokers and topics. */
  readonly where: string;
  /** Every projection, folded from the runs topic from its first record. */
  rebuild(onProgress?: (n: number) => void): Promise<Projections>;
  /** Every event that counts, from the runs topic's first record, in per-run order (`RunStream.readAll`); resolves with the records read. */
  scan(apply: (rec: RecordedEvent) => void): Promise<number>;
  /**
   * Every event that counts (the batch rule of `scan`) of the runs topic and then each new one, until the signal, as consumer group
   * `group` (from its committed offsets; the beginning for a new group). Kafka only: the embedded
   * store has no consumer groups to keep a follower's position in.
   */
  followRuns(
    apply: (rec: RecordedEvent) => Promise<void> | void,
    signal: AbortSignal,
    group: string,
  ): Promise<void>;
  /**
   * The embedded store's run index (run-index.ts): runs in order of first appearance, a page at a
   * time. Absent on Kafka, whose runs topic has an order only per partition.
   */
  readonly runIndex?: {
    page(offset: number, limit: number): Promise<RunIndexPage>;
    /** False for a store written before the index, opened read-only: pages then scan the table. */
    readonly indexed: boolean;
    /**
     * The runs that match `filters`, a page of them, from the store's run rows (run-rows.ts), each
     * with its events; null when the rows are not the log's (none yet, or behind it): fold the log.
     */
    filtered(filters: RunRowFilters, offset: number, limit: number): Promise<FilteredRunEvents | null>;
    /** False for a store written before the run rows, opened read-only: filtered pages fold the log. */
    readonly rowsKept: boolean;
  };
  /** Events on the runs topic now: a progress bar's total. */
  eventCount(): Promise<number>;
  /** Run ids already in the log: a second recording of one run would corrupt its history. */
  knownRunIds(): Promise<Set<string>>;
  /** Every stop report: the stops topic, and on the embedded log any stop not copied there yet. */
  readStops(): AsyncIterable<RecordedEvent>;
  /**
   * Publishes fleet loop detections on the stops topic; on the embedded log where it ends when it
   * is read, so another process copying stops meanwhile cannot put them out of order.
   */
  publishAlerts(records: readonly RecordedEvent[]): Promise<void>;
  /** The key for secret values recorded here (only commands that record need one). */
  secretKey(env: Readonly<Record<string, string | undefined>>): string;
  close(): Promise<void>;
}

/**
 * The embedded store in a data dir (its SQLite database): the default, no server needed.
 * `readOnly` for commands that only read: nothing in the dir is created or written, and a dir
 * that does not exist is an error rather than a new empty log.
 */
export async function openEmbeddedStore(
  dataDir: string = DEFAULT_DATA_DIR,
  opts: { readonly readOnly?: boolean } = {},
): Promise<OpenStore> {
  const readOnly = opts.readOnly ?? false;
  const log = await EmbeddedLog.open(dataDir, { readOnly });
  const schemas = new SqliteSchemaStore(dataDir, { readOnly });
  const events = await EventStore.create(log, schemas);
  const stream = log.runStream(events);
  return {
    events,
    stream,
    where: `data dir ${dataDir}`,
    rebuild: async (onProgress) => (await rebuildFromStream(stream, onProgress)).projections,
    scan: (apply) => stream.readAll(apply),
    followRuns: () =>
      Promise.reject(
        new LoopguardError(
          'usage',
          'following needs Kafka (--kafka): the embedded store keeps no consumer group positions',
        ),
      ),
    eventCount: () => log.endOffset(TOPICS.runs),
    runIndex: {
      page: (offset, limit) => log.runPage(offset, limit),
      indexed: log.runIndexed,
      filtered: async (filters, offset, limit) => {
        const found = await log.filteredRunPage(filters, offset, limit);
        if (found === null) return null;
        const runs: RecordedEvent[][] = [];
        for (const run of found.runs) {
          const list: RecordedEvent[] = [];
          for (const v of run.values)
            list.push(events.decodeKnown(TOPICS.runs, v) ?? (await events.decode(TOPICS.runs, v)));
          runs.push(list);
        }
        return { total: found.total, matching: found.matching, runs };
      },
      rowsKept: log.runRowsKept,
    },
    secretKey: (env) => chooseSecretKey(undefined, { kind: 'embedded', dataDir }, env),
    knownRunIds: async () => {
      const ids = new Set<string>();
      await stream.readAll((e) => ids.add(e.runId));
      return ids;
    },
    async *readStops() {
      yield* events.readStops(0);
      yield* await new CopyProjector(log, events).unpublished(TOPICS.stops);
    },
    publishAlerts: (records) => new CopyProjector(log, events).publishAlerts(records),
    close: async () => {
      await stream.close();
      await schemas.close();
      await log.close();
    },
  };
}
