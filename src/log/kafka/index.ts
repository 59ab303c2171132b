/** Public face of the Kafka adapter: the EventLog on Kafka and its DLQ-aware group consumer. */
export { DecodingConsumer, type DecodingConsumerOptions, DLQ_HEADERS } from './decoding-consumer.js';
export { KafkaLog, type KafkaLogOptions, type PartitionedRecord } from './kafka-log.js';
export { type CompatibilityLevel, ensureSubjectCompatibility } from './subject-compatibility.js';
export { DEFAULT_TOPIC_CONFIGS, type TopicLayoutOptions } from './topic-layout.js';
export type { TopicInfo } from './topic-registry.js';
