/**
 * The reader-equivalence contract on Kafka, on the real broker: the losing batch and the zombie
 * append land on the runs topic as a second writer's KafkaRunStream would send them (its own
 * batch id, the seq it expected), and the CLI's rebuild and scan must skip them as the run's
 * stream does.
 */
import { randomUUID } from 'node:crypto';
import { openKafkaStore } from '../src/cli/open-kafka-store.js';
import { TOPICS } from '../src/log/event-log.js';
import { KafkaRunStream } from '../src/log/kafka/kafka-run-stream.js';
import { AFTER_HEADER, BATCH_HEADER } from '../src/log/kafka/run-batch-fold.js';
import { readerEquivalenceContract } from './reader-equivalence-contract.js';
import { kafkaEnv } from './setup/kafka-env.js';

readerEquivalenceContract('kafka', async () => {
  const env = kafkaEnv();
  const prefix = `readers-${randomUUID()}.`;
  const store = await openKafkaStore({
    brokers: env.brokers,
    registryUrl: env.registryUrl,
    topicPrefix: prefix,
  });
  const streams: KafkaRunStream[] = [];
  return {
    stream: () => {
      const s = new KafkaRunStream(store.events, store.log);
      streams.push(s);
      return s;
    },
    appendLost: async (runId, after, es) => {
      const headers = { [AFTER_HEADER]: String(after), [BATCH_HEADER]: `loser-${runId}/1` };
      await store.log.append(
        TOPICS.runs,
        es.map((e) => store.events.runRecord(e, headers)),
      );
    },
    rebuild: () => store.rebuild(),
    scan: (apply) => store.scan(apply),
    runId: (base) => `${base}-${randomUUID()}`,
    cleanup: async () => {
      for (const s of streams) await s.close();
      await store.close();
    },
  };
});
