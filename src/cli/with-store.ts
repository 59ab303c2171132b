import { type Env, type KafkaFlags, kafkaConfig } from './kafka-config.js';
import { type OpenStore, openEmbeddedStore } from './open-store.js';
import { KAFKA_PACKAGES, needs } from './optional-package.js';

/**
 * Runs `work` on the log the flags select (Kafka, or the embedded data dir, read-only unless
 * `access` is 'write') and closes it after. The Kafka adapter is loaded only when asked for.
 */
export async function withStore<T>(
  flags: KafkaFlags,
  env: Env,
  work: (s: OpenStore) => Promise<T>,
  access: 'read' | 'write' = 'read',
): Promise<T> {
  const kafka = kafkaConfig(flags, env);
  const store = kafka
    ? await (await needs('--kafka', KAFKA_PACKAGES, () => import('./open-kafka-store.js'))).openKafkaStore(
        kafka,
      )
    : await openEmbeddedStore(flags['data-dir'], { readOnly: access === 'read' });
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}
