/**
 * How an integration test finds the Kafka broker and schema registry that
 * `kafka-global-setup.ts` started (or verified). The setup both sets process.env (inherited by
 * test workers, which are spawned after global setup) and `provide`s the values; tests should
 * call `kafkaEnv()` rather than read either directly, so the mechanism can change in one place.
 */
import { inject } from 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    kafkaBrokers: string;
    schemaRegistryUrl: string;
  }
}

export interface KafkaEnv {
  /** e.g. ['127.0.0.1:40123'] */
  brokers: string[];
  /** Confluent-compatible base URL, e.g. 'http://127.0.0.1:40124/apis/ccompat/v7'. */
  registryUrl: string;
}

/** Splits a KAFKA_BROKERS-style list ("h1:p1,h2:p2"). */
export function parseBrokers(list: string): string[] {
  return list
    .split(',')
    .map((b) => b.trim())
    .filter((b) => b.length > 0);
}

/** Brokers and registry URL for this test run; throws if global setup did not run. */
export function kafkaEnv(): KafkaEnv {
  const brokers = inject('kafkaBrokers') || process.env.KAFKA_BROKERS;
  const registryUrl = inject('schemaRegistryUrl') || process.env.SCHEMA_REGISTRY_URL;
  if (!brokers || !registryUrl) {
    throw new Error(
      'kafkaEnv(): no Kafka/registry. Run integration tests with `npx vitest run --project int` ' +
        '(its globalSetup starts them), or set both KAFKA_BROKERS and SCHEMA_REGISTRY_URL.',
    );
  }
  return { brokers: parseBrokers(brokers), registryUrl: registryUrl.replace(/\/+$/, '') };
}
