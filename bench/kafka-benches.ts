import type { Bench } from './bench-result.js';

/** Kafka figures (publish, rebuild, the librdkafka client): filled in by bench/kafka-*.ts. */
export const kafkaBenches: Bench[] = [];
