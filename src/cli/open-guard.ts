import type { Policy } from '../domain/index.js';
import { DEFAULT_DATA_DIR } from '../log/embedded/embedded-log.js';
import { SqliteLedger } from '../log/embedded/sqlite-ledger.js';
import { TOPICS } from '../log/event-log.js';
import type { Ledger } from '../ports/ledger.js';
import { Guard } from '../runtime/guard.js';
import type { GuardMetrics } from '../telemetry/guard-telemetry-ports.js';
import { type Env, type KafkaFlags, kafkaConfig } from './kafka-config.js';
import { type OpenStore, openEmbeddedStore } from './open-store.js';
import { KAFKA_PACKAGES, needs } from './optional-package.js';

/**
 * A Guard over the log the flags select, as the other commands choose it: the embedded log and
 * its file ledger in the data dir, or Kafka with its ledger topic (subjects follow a topic prefix).
 * Closing the guard closes the log.
 */
export async function openGuard(
  flags: KafkaFlags,
  env: Env,
  policy: Policy,
  metrics?: GuardMetrics,
): Promise<{ guard: Guard; where: string }> {
  const kafka = kafkaConfig(flags, env);
  const guardOver = (store: OpenStore, ledger: Ledger, secretKey: string) => ({
    guard: new Guard({
      store: store.stream,
      ledger,
      policy,
      secretKey,
      ...(metrics ? { metrics } : {}),
      onClose: () => store.close(),
    }),
    where: store.where,
  });
  if (kafka === null) {
    const dataDir = flags['data-dir'] ?? DEFAULT_DATA_DIR;
    const store = await openEmbeddedStore(dataDir);
    return guardOver(store, SqliteLedger.open(dataDir), store.secretKey(env));
  }
  // kafkajs is an optional package: loaded only for a Kafka log.
  const [{ openKafkaStore }, { KafkaLedger }, { RegistrySchemaStore }] = await needs(
    '--kafka',
    KAFKA_PACKAGES,
    () =>
      Promise.all([
        import('./open-kafka-store.js'),
        import('../log/kafka/kafka-ledger.js'),
        import('../events/registry-schema-store.js'),
      ]),
  );
  const store = await openKafkaStore(kafka);
  try {
    // Before the ledger opens: without a shared key the command stops here, with nothing to undo.
    const secretKey = store.secretKey(env);
    const ledger = await KafkaLedger.open({
      log: store.log,
      schemaStore: new RegistrySchemaStore({ url: kafka.registryUrl }),
      subject: `${store.log.physicalName(TOPICS.ledger)}-value`,
    });
    return guardOver(store, ledger, secretKey);
  } catch (e) {
    await store.close();
    throw e;
  }
}
