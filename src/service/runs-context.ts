/**
 * What loading a partition's runs needs, opened on its own: by a worker, and by tools that load
 * partitions as a takeover does (the snapshot tests, the takeover benchmark).
 */
import type { Admin } from 'kafkajs';
import { cachedDiceSimilarity, type DeciderDeps } from '../domain/index.js';
import type { EventStore } from '../log/event-store.js';
import type { KafkaLog } from '../log/kafka/kafka-log.js';
import { KafkaRunStream } from '../log/kafka/kafka-run-stream.js';
import { type Clock, systemClock } from '../machines/index.js';
import { nodeHashing } from '../runtime/node-hashing.js';
import type { ServiceConnection } from './open-service.js';
import { PartitionSnapshots } from './partition-snapshots.js';

export interface RunsContext {
  readonly log: KafkaLog;
  readonly admin: Admin;
  readonly events: EventStore;
  readonly stream: KafkaRunStream;
  /** Where ended runs put aside are read back from, with the workers' group. */
  readonly snapshots: PartitionSnapshots;
  readonly group: string;
  readonly deps: DeciderDeps;
  readonly clock: Clock;
  readonly timeoutMs: number;
  /** Where something an operator should fix is said (the worker's log). */
  readonly note?: (line: string) => void;
}

export interface OpenedRunsContext {
  readonly ctx: RunsContext;
  close(): Promise<void>;
}

export async function openRunsContext(
  conn: Pick<ServiceConnection, 'log' | 'events'>,
  opts: {
    readonly group: string;
    readonly secretKey: string;
    readonly clock?: Clock;
    readonly timeoutMs?: number;
  },
): Promise<OpenedRunsContext> {
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const snapshots = await PartitionSnapshots.open(
    conn.log,
    conn.events.schemas,
    conn.events.subjectFor,
    timeoutMs,
  );
  const admin = conn.log.kafka.admin();
  await admin.connect();
  const stream = new KafkaRunStream(conn.events, conn.log);
  return {
    ctx: {
      log: conn.log,
      admin,
      events: conn.events,
      stream,
      snapshots,
      group: opts.group,
      deps: { hashing: nodeHashing(opts.secretKey), similarity: cachedDiceSimilarity() },
      clock: opts.clock ?? systemClock,
      timeoutMs,
    },
    close: async () => {
      await Promise.allSettled([stream.close(), admin.disconnect()]);
    },
  };
}
