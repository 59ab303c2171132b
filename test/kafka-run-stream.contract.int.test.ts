/** The RunStream contract on Kafka: a partitioned runs topic (the default layout), fresh topics per test. */
import { randomUUID } from 'node:crypto';
import { RegistrySchemaStore } from '../src/events/registry-schema-store.js';
import { EventStore } from '../src/log/event-store.js';
import { KafkaLog } from '../src/log/kafka/kafka-log.js';
import { KafkaRunStream } from '../src/log/kafka/kafka-run-stream.js';
import { runStreamContract } from './run-stream-contract.js';
import { kafkaEnv } from './setup/kafka-env.js';

runStreamContract('kafka', async () => {
  const env = kafkaEnv();
  const log = await KafkaLog.connect({
    brokers: env.brokers,
    clientId: 'stream-contract',
    topicSuffix: `-${randomUUID()}`,
  });
  const events = await EventStore.create(log, new RegistrySchemaStore({ url: env.registryUrl }), {
    subjectFor: (t) => `${log.physicalName(t)}-value`,
  });
  const streams: KafkaRunStream[] = [new KafkaRunStream(events, log)];
  return {
    stream: streams[0] as KafkaRunStream,
    events,
    second: () => {
      const s = new KafkaRunStream(events, log);
      streams.push(s);
      return s;
    },
    runId: (base) => base,
    cleanup: async () => {
      for (const s of streams) await s.close();
      await log.close();
    },
  };
});
