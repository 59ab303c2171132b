import { LoopguardError } from '../domain/index.js';

/** Which log the flags select, read without loading a Kafka client (that is an optional package). */
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

/** Whether the command line asks for Kafka: `--kafka`, `--brokers` or `--registry`. */
export const kafkaAsked = (flags: KafkaFlags): boolean =>
  flags.kafka === true || flags.brokers !== undefined || flags.registry !== undefined;

/**
 * Which log a command uses. `--kafka` (or `--brokers`) asks for Kafka; an explicit `--data-dir`
 * asks for the embedded log even when the environment names a cluster, so an exported
 * KAFKA_BROKERS never silently redirects a command pointed at a directory; otherwise both
 * KAFKA_BROKERS and SCHEMA_REGISTRY_URL set select Kafka. Kafka asked for is never null: without
 * brokers or a registry it is an error.
 */
export function kafkaConfig(flags: KafkaFlags & { readonly kafka: true }, env: Env): KafkaConfig;
export function kafkaConfig(flags: KafkaFlags, env: Env): KafkaConfig | null;
export function kafkaConfig(flags: KafkaFlags, env: Env): KafkaConfig | null {
  const brokers = flags.brokers ?? env.KAFKA_BROKERS;
  const registry = flags.registry ?? env.SCHEMA_REGISTRY_URL;
  const asked = kafkaAsked(flags);
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
