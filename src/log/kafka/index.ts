/** Public face of the Kafka adapter: the EventLog on Kafka, the idempotency ledger on it, and the DLQ-aware group consumer. */
export { DecodingConsumer, type DecodingConsumerOptions, DLQ_HEADERS } from './decoding-consumer.js';
export { KafkaLedger, type KafkaLedgerOptions } from './kafka-ledger.js';
export { KafkaLog, type KafkaLogOptions, type PartitionedRecord } from './kafka-log.js';
export { KafkaRunStream } from './kafka-run-stream.js';
export { DEFAULT_TOPIC_CONFIGS, type TopicLayoutOptions } from './topic-layout.js';
export type { TopicInfo } from './topic-registry.js';
