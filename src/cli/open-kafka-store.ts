import { LoopguardError } from '../domain/index.js';
import { RegistrySchemaStore } from '../events/registry-schema-store.js';
import { TOPICS } from '../log/event-log.js';
import { EventStore } from '../log/event-store.js';
import { DecodingConsumer } from '../log/kafka/decoding-consumer.js';
import { KafkaLog } from '../log/kafka/kafka-log.js';
import { chooseSecretKey } from '../runtime/secret-key.js';
import type { OpenStore } from './open-store.js';
import { rebuildFromStream } from './rebuild-from-stream.js';

export interface KafkaConfig {
  readonly brokers: readonly string[];
  readonly registryUrl: string;
  /** Prepended to every topic name (and so to every registry subject): isolation on a shared cluster. */
  readonly topicPrefix?: string;
}

export interface KafkaFlags {
  readonly kafka?: boolean;
  readonly brokers?: string;
  readonly registry?: string;
  readonly 'topic-prefix'?: string;
  readonly 'data-dir'?: string;
}

export type Env = Readonly<Record<string, string | undefined>>;

/**
 * Which log a command uses. `--kafka` (or `--brokers`) asks for Kafka; an explicit `--data-dir`
 * asks for the embedded log even when the environment names a cluster, so an exported
 * KAFKA_BROKERS never silently redirects a command pointed at a directory; otherwise both
 * KAFKA_BROKERS and SCHEMA_REGISTRY_URL set select Kafka, as the issue asks.
 */
export function kafkaConfig(flags: KafkaFlags, env: Env): KafkaConfig | null {
  const brokers = flags.brokers ?? env.KAFKA_BROKERS;
  const registry = flags.registry ?? env.SCHEMA_REGISTRY_URL;
  const asked = flags.kafka === true || flags.brokers !== undefined || flags.registry !== undefined;
  if (!asked && (flags['data-dir'] !== undefined || !env.KAFKA_BROKERS || !env.SCHEMA_REGISTRY_URL))
    return null;
  if (asked && flags['data-dir'] !== undefined)
    throw new LoopguardError('usage', '--data-dir is for the embedded log; it cannot go with --kafka');
  const list = (brokers ?? '')
    .split(',')
    .map((b) => b.trim())
    .filter((b) => b.length > 0);
  if (list.length === 0)
    throw new LoopguardError('kafka_config', 'Kafka needs brokers: --brokers host:port or KAFKA_BROKERS');
  if (!registry)
    throw new LoopguardError(
      'kafka_config',
      'Kafka needs a schema registry: --registry URL or SCHEMA_REGISTRY_URL',
    );
  const prefix = flags['topic-prefix'];
  return { brokers: list, registryUrl: registry, ...(prefix ? { topicPrefix: prefix } : {}) };
}

/** KafkaLog + the registry + EventStore, subjects named after the real (prefixed) topics. */
export async function openKafkaStore(cfg: KafkaConfig): Promise<OpenStore & { readonly log: KafkaLog }> {
  const log = await KafkaLog.connect({
    brokers: cfg.brokers,
    clientId: 'loopguard-cli',
    ...(cfg.topicPrefix ? { topicPrefix: cfg.topicPrefix } : {}),
  });
  try {
    const events = await EventStore.create(log, new RegistrySchemaStore({ url: cfg.registryUrl }), {
      subjectFor: (t) => `${log.physicalName(t)}-value`,
    });
    const stream = log.runStream(events);
    return {
      log,
      events,
      stream,
      where: `kafka ${cfg.brokers.join(',')} (topics ${log.physicalName('loopguard.*')})`,
      rebuild: async (onProgress) => (await rebuildFromStream(stream, onProgress)).projections,
      scan: (apply) => stream.readAll(apply),
      followRuns: async (apply, signal, groupId) => {
        const consumer = await DecodingConsumer.start(log, {
          topic: TOPICS.runs,
          groupId,
          decode: (value) => events.decode(TOPICS.runs, value),
          handle: (e) => apply(e),
        });
        await new Promise<void>((done) =>
          signal.aborted ? done() : signal.addEventListener('abort', () => done(), { once: true }),
        );
        await consumer.stop();
      },
      eventCount: () => log.recordCount(TOPICS.runs),
      knownRunIds: () => kafkaRunIds(log),
      readStops: () => events.readStops(0),
      secretKey: (env) =>
        chooseSecretKey(
          undefined,
          { kind: 'shared', where: 'replay --kafka (workers share the topics)' },
          env,
        ),
      close: async () => {
        await stream.close();
        await log.close();
      },
    };
  } catch (e) {
    await log.close();
    throw e;
  }
}

/** Run ids on the runs topic, from the record keys alone: no decoding needed. */
async function kafkaRunIds(log: KafkaLog): Promise<Set<string>> {
  const ids = new Set<string>();
  await log.scan(TOPICS.runs, (r) => {
    ids.add(r.key);
  });
  return ids;
}
