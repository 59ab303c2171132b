/**
 * The readers of rebuild, audit and whatif get past a leader election on the real broker: a
 * dedicated broker of its own is killed and started again while the reads are under way, so
 * every partition of the topic is without a leader until the restarted broker has elected it
 * again (connections refused, then NOT_LEADER_OR_FOLLOWER / LEADER_NOT_AVAILABLE while it loads).
 * kafkajs's admin gives up on the first of these; the adapter's retry policy waits them out, and
 * a read resumes where it stopped, so no record is missed or handed over twice.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { TOPICS } from '../src/log/event-log.js';
import { KafkaLog } from '../src/log/kafka/kafka-log.js';
import { KAFKA_RETRY } from '../src/log/kafka/kafka-retry.js';
import { type RestartableKafka, startRestartableKafka } from './support/faults/restartable-kafka.js';

let kafka: RestartableKafka;
beforeAll(async () => {
  kafka = await startRestartableKafka();
}, 180_000);
afterAll(async () => {
  await kafka?.close();
}, 60_000);

const RUNS = 12;
const PER_RUN = 25;

it('rebuild, audit and whatif reads are retried through a broker restart and see every record once', {
  timeout: 240_000,
}, async () => {
  const log = await KafkaLog.connect({
    brokers: [kafka.brokers],
    topicPrefix: `retry-${randomUUID()}.`,
    // A JVM restart on a loaded 2-core machine can outlast the default 30 s deadline.
    retry: { ...KAFKA_RETRY, deadlineMs: 150_000 },
    requestTimeoutMs: 150_000,
  });
  try {
    const written = new Map<string, string[]>();
    await Promise.all(
      Array.from({ length: RUNS }, async (_, r) => {
        const runId = `run-${r}`;
        const values = Array.from({ length: PER_RUN }, (_, i) => `${runId}:${i}`);
        written.set(runId, values);
        await log.append(
          TOPICS.runs,
          values.map((v) => ({ key: runId, value: Buffer.from(v) })),
        );
      }),
    );

    await kafka.stop();
    // Started while the broker is down: each first attempt fails, as a read of a cluster
    // electing its leaders does.
    const scanned: string[] = [];
    const scan = log.scan(TOPICS.runs, (rec) => {
      scanned.push(rec.value.toString());
    });
    const one = log.readKey(TOPICS.runs, 'run-3');
    const ends = log.partitionEnds(TOPICS.runs);
    await kafka.start();

    expect(await scan).toBe(RUNS * PER_RUN);
    expect(scanned.sort()).toEqual([...written.values()].flat().sort());
    expect((await one).map((r) => r.value.toString())).toEqual(written.get('run-3'));
    expect((await ends).reduce((n, p) => n + p.high - p.low, 0)).toBe(RUNS * PER_RUN);
  } finally {
    await log.close();
  }
});
