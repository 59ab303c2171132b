import { RegistrySchemaStore } from '../events/registry-schema-store.js';
import { TOPICS } from '../log/event-log.js';
import { EventStore } from '../log/event-store.js';
import { KafkaLog } from '../log/kafka/kafka-log.js';
import type { SchemaStore } from '../ports/schema-store.js';
import { SERVICE_SCHEMAS, ServiceCodec } from './service-codec.js';
import {
  DEFAULT_SERVICE_PARTITIONS,
  SERVICE_TOPICS,
  type WireDecision,
  type WireRequest,
} from './service-topics.js';

export interface ServiceConfig {
  readonly brokers: readonly string[];
  readonly registryUrl: string;
  readonly topicPrefix?: string;
  /** Partitions of requests, decisions and runs when this process creates them. */
  readonly partitions?: number;
  readonly clientId?: string;
}

export interface ServiceConnection {
  readonly log: KafkaLog;
  readonly schemaStore: SchemaStore;
  readonly events: EventStore;
  readonly requests: ServiceCodec<WireRequest>;
  readonly decisions: ServiceCodec<WireDecision>;
  close(): Promise<void>;
}

/**
 * The Kafka log (requests, decisions and runs partitioned alike, so a run's requests and events
 * share a partition number) with the codecs, subjects named `<physical topic>-value`.
 */
export async function openService(cfg: ServiceConfig): Promise<ServiceConnection> {
  const n = cfg.partitions ?? DEFAULT_SERVICE_PARTITIONS;
  const log = await KafkaLog.connect({
    brokers: cfg.brokers,
    clientId: cfg.clientId ?? 'loopguard-serve',
    partitions: { [TOPICS.runs]: n, [SERVICE_TOPICS.requests]: n, [SERVICE_TOPICS.decisions]: n },
    // Only a partition's newest snapshot is read (partition-snapshots.ts).
    topicConfigs: { [SERVICE_TOPICS.snapshots]: { 'cleanup.policy': 'compact' } },
    ...(cfg.topicPrefix ? { topicPrefix: cfg.topicPrefix } : {}),
  });
  try {
    const schemaStore = new RegistrySchemaStore({ url: cfg.registryUrl });
    const subject = (t: string) => `${log.physicalName(t)}-value`;
    const [events, requests, decisions] = await Promise.all([
      EventStore.create(log, schemaStore, { subjectFor: subject }),
      ServiceCodec.create<WireRequest>(
        schemaStore,
        subject(SERVICE_TOPICS.requests),
        SERVICE_SCHEMAS.request,
      ),
      ServiceCodec.create<WireDecision>(
        schemaStore,
        subject(SERVICE_TOPICS.decisions),
        SERVICE_SCHEMAS.decision,
      ),
    ]);
    return { log, schemaStore, events, requests, decisions, close: () => log.close() };
  } catch (e) {
    await log.close();
    throw e;
  }
}
