/**
 * `loopguard/kafka`: the production adapters. The EventLog on Kafka, the idempotency ledger on its
 * ledger topic, the schema registry, the DLQ-aware consumer, and the stop alerts that subscribe to
 * the stops topic. A separate entry so that an embedded-only user reads one smaller API.
 */
export {
  type AlertSink,
  type AlertSubscriberOptions,
  type AlertSubscription,
  DEFAULT_ALERT_GROUP,
  type StopAlert,
  startAlertSubscriber,
  stdoutSink,
  toStopAlert,
  type WebhookOptions,
  webhookSink,
} from './alert/index.js';
export { RegistrySchemaStore, type RegistrySchemaStoreOptions } from './events/index.js';
export {
  type CompatibilityLevel,
  DEFAULT_TOPIC_CONFIGS,
  DecodingConsumer,
  type DecodingConsumerOptions,
  DLQ_HEADERS,
  ensureSubjectCompatibility,
  KafkaLedger,
  type KafkaLedgerOptions,
  KafkaLog,
  type KafkaLogOptions,
  KafkaRunStream,
  type PartitionedRecord,
  type TopicInfo,
  type TopicLayoutOptions,
} from './log/kafka/index.js';
