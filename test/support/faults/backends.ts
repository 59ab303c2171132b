/**
 * Where a fault scenario keeps its log and ledger: the embedded data dir or Kafka (a topic prefix
 * of its own). Plain JSON, so a child process gets the same backend on its command line.
 */
import { RegistrySchemaStore } from '../../../src/events/registry-schema-store.js';
import type { PolicyInput } from '../../../src/index.js';
import { KafkaLedger } from '../../../src/log/kafka/kafka-ledger.js';
import { KafkaLog } from '../../../src/log/kafka/kafka-log.js';
import type { Clock } from '../../../src/machines/index.js';
import { createGuard, type Guard } from '../../../src/runtime/index.js';

export type Backend =
  /** One data dir shared by every process: its database holds the log, the ledger and the schemas. */
  | { readonly kind: 'embedded'; readonly dataDir: string }
  | {
      readonly kind: 'kafka';
      readonly dataDir: string;
      readonly brokers: readonly string[];
      readonly registryUrl: string;
      readonly topicPrefix: string;
      readonly leaseMs?: number;
      readonly requestTimeoutMs?: number;
    };

export interface Opened {
  readonly guard: Guard;
  readonly close: () => Promise<void>;
}

export async function openGuard(backend: Backend, policy: PolicyInput, clock?: Clock): Promise<Opened> {
  if (backend.kind === 'embedded') {
    const guard = await createGuard({
      policy,
      dataDir: backend.dataDir,
      ...(clock ? { clock } : {}),
    });
    return { guard, close: () => guard.close() };
  }
  const timeoutMs = backend.requestTimeoutMs ?? 30_000;
  const log = await KafkaLog.connect({
    brokers: backend.brokers,
    topicPrefix: backend.topicPrefix,
    requestTimeoutMs: timeoutMs,
  });
  const schemaStore = new RegistrySchemaStore({ url: backend.registryUrl });
  const ledger = await KafkaLedger.open({
    log,
    schemaStore,
    timeoutMs,
    ...(backend.leaseMs !== undefined ? { leaseMs: backend.leaseMs } : {}),
    ...(clock ? { clock } : {}),
  });
  const guard = await createGuard({
    policy,
    dataDir: backend.dataDir,
    log,
    ledger,
    schemaStore,
    // Workers share the topics, so they share the key of secret values too.
    secretKey: 'faults-test-key',
    ...(clock ? { clock } : {}),
  });
  return {
    guard,
    close: async () => {
      await guard.close();
      await log.close();
    },
  };
}

/** The same backend seen from another process: on Kafka a data dir of its own; embedded, the same data dir. */
export function forWorker(backend: Backend, dataDir: string): Backend {
  if (backend.kind === 'kafka') return { ...backend, dataDir };
  return backend;
}
