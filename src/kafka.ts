/**
 * `loopguard/kafka`: the production adapters. The EventLog on Kafka, the idempotency ledger on its
 * ledger topic, the schema registry, the DLQ-aware consumer, the stop alerts that subscribe to
 * the stops topic, and the guard as a service (the `serve` worker and its remote client). A
 * separate entry so that an embedded-only user reads one smaller API.
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
export {
  createRemoteGuard,
  RemoteGuard,
  type RemoteGuardOptions,
  RemoteRun,
  type RemoteRunState,
} from './client/index.js';
export {
  type CompatibilityLevel,
  ensureSubjectCompatibility,
  RegistrySchemaStore,
  type RegistrySchemaStoreOptions,
} from './events/index.js';
export {
  DEFAULT_TOPIC_CONFIGS,
  DecodingConsumer,
  type DecodingConsumerOptions,
  DLQ_HEADERS,
  KafkaLedger,
  type KafkaLedgerOptions,
  KafkaLog,
  type KafkaLogOptions,
  KafkaRunStream,
  type PartitionedRecord,
  type TopicInfo,
  type TopicLayoutOptions,
} from './log/kafka/index.js';
export {
  emptyRequest,
  GuardWorker,
  type GuardWorkerOptions,
  openService,
  REQUEST_ID_HEADER,
  type RequestType,
  SERVICE_TOPICS,
  type ServiceConfig,
  type ServiceConnection,
  type WireDecision,
  type WireRequest,
} from './service/index.js';
