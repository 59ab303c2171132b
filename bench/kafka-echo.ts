/**
 * The baseline of the service benchmarks: a bare round trip on the same broker with the same
 * shape as a guard request, minus the guard. A client produces a keyed message, an echo worker in
 * a consumer group consumes it and produces it back to a reply topic (idempotent producer,
 * acks=all, one send per batch, no transaction, no Avro, no decision), and the client consumes
 * the reply. Two kinds: `commits`, the echo as kafkajs runs a consumer by default (each batch's
 * offsets committed before the next fetch, on both hops), the baseline the service's targets were
 * set against; and bare (no offset commits), the floor of a round trip through a consumer group.
 * The client publishes through KafkaLog, as the guard client does, so both sides batch concurrent
 * requests the same way (KafkaLog's default: no linger; appends made during a produce share the
 * next).
 */
import { randomUUID } from 'node:crypto';
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { KafkaLog } from '../src/log/kafka/kafka-log.js';
import { fixKafkajsRequestQueue } from '../src/log/kafka/kafkajs-request-queue.js';
import type { KafkaTarget } from './bench-result.js';
import type { RoundTrip } from './service-load.js';

export interface Echo {
  readonly roundTrip: RoundTrip;
  close(): Promise<void>;
}

export async function startEcho(
  target: KafkaTarget,
  partitions: number,
  { commits }: { readonly commits: boolean },
): Promise<Echo> {
  fixKafkajsRequestQueue(); // as loopguard's own clients run, so the baseline is like for like
  const kafka = new Kafka({ clientId: 'bench-echo', brokers: target.brokers, logLevel: logLevel.NOTHING });
  const id = randomUUID().slice(0, 8);
  const req = `bench-echo-${id}.req`;
  const rep = `bench-echo-${id}.rep`;
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    waitForLeaders: true,
    topics: [req, rep].map((topic) => ({ topic, numPartitions: partitions })),
  });
  const workerOut = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  const clientOut = await KafkaLog.connect({
    brokers: target.brokers,
    clientId: 'bench-echo-client',
    partitions: { [req]: partitions, [rep]: partitions },
  });
  const worker = kafka.consumer({ groupId: `bench-echo-${id}`, maxWaitTimeInMs: 50 });
  const replies = kafka.consumer({ groupId: `bench-echo-client-${id}`, maxWaitTimeInMs: 20 });
  await Promise.all([workerOut.connect(), worker.connect(), replies.connect()]);
  await worker.subscribe({ topics: [req], fromBeginning: true });
  await replies.subscribe({ topics: [rep], fromBeginning: true });
  const waiting = new Map<string, () => void>();
  // kafkajs's auto-commit puts an OffsetCommit before each next fetch, on both hops.
  await worker.run({
    autoCommit: commits,
    partitionsConsumedConcurrently: partitions,
    eachBatch: async ({ batch }) => {
      await workerOut.send({
        topic: rep,
        acks: -1,
        messages: batch.messages.map((m) => ({ key: m.key, value: m.value })),
      });
    },
  });
  await replies.run({
    autoCommit: commits,
    partitionsConsumedConcurrently: partitions,
    eachBatch: async ({ batch }) => {
      for (const m of batch.messages) {
        const k = m.value?.toString() ?? '';
        waiting.get(k)?.();
        waiting.delete(k);
      }
    },
  });
  // Both groups must hold their partitions before the clock starts.
  const warm = async (key: string) => {
    const value = randomUUID();
    const done = new Promise<void>((resolve) => waiting.set(value, resolve));
    await clientOut.append(req, [{ key, value: Buffer.from(value) }]);
    await done;
  };
  await warm('warm-up');
  return {
    roundTrip: warm,
    close: async () => {
      await Promise.allSettled([
        worker.disconnect(),
        replies.disconnect(),
        workerOut.disconnect(),
        clientOut.close(),
      ]);
      await admin.deleteTopics({ topics: [req, rep] }).catch(() => undefined);
      await admin.disconnect();
    },
  };
}
