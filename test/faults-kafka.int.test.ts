import { randomUUID } from 'node:crypto';
import { faultScenarios } from './faults-scenarios.js';
import { kafkaEnv } from './setup/kafka-env.js';

faultScenarios(
  'Kafka',
  (dataDir) => ({
    kind: 'kafka',
    dataDir,
    brokers: kafkaEnv().brokers,
    registryUrl: kafkaEnv().registryUrl,
    topicPrefix: `faults-${randomUUID()}-`,
  }),
  120_000,
);
