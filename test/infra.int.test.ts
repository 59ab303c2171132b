/**
 * Smoke test of the local test infrastructure: proves kafkajs 2.2.4 works against the broker
 * from infra/ (Kafka 4.x dropped old protocol versions, KIP-896) for everything the Kafka
 * adapter needs, and that the Apicurio registry works for a Confluent client library
 * (@kafkajs/confluent-schema-registry, a dev dependency here): records loopguard frames for it are
 * records any Confluent client can decode.
 */
import { randomUUID } from 'node:crypto';
import { SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import { type Consumer, Kafka, logLevel, Partitioners, type Producer } from 'kafkajs';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { ensureSubjectCompatibility } from '../src/events/subject-compatibility.js';
import { kafkaEnv } from './setup/kafka-env.js';

const unique = (prefix: string): string => `${prefix}-${randomUUID()}`;
const kafka = (): Kafka =>
  new Kafka({ clientId: unique('infra-smoke'), brokers: kafkaEnv().brokers, logLevel: logLevel.ERROR });

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

async function createCompactedTopic(k: Kafka, topic: string): Promise<void> {
  const admin = k.admin();
  await admin.connect();
  cleanups.push(() => admin.disconnect());
  const created = await admin.createTopics({
    waitForLeaders: true,
    topics: [
      {
        topic,
        numPartitions: 3,
        replicationFactor: 1,
        configEntries: [{ name: 'cleanup.policy', value: 'compact' }],
      },
    ],
  });
  expect(created).toBe(true);
}

/** Consumes with a fresh group (eachBatch) until `count` messages arrived. */
async function consumeAll(
  k: Kafka,
  topic: string,
  count: number,
  readUncommitted = false,
): Promise<Map<string, string>> {
  const consumer: Consumer = k.consumer({ groupId: unique('infra-smoke-group'), readUncommitted });
  await consumer.connect();
  cleanups.push(() => consumer.disconnect());
  await consumer.subscribe({ topic, fromBeginning: true });
  const seen = new Map<string, string>();
  await new Promise<void>((resolve, reject) => {
    consumer
      .run({
        eachBatch: async ({ batch, resolveOffset, heartbeat }) => {
          for (const m of batch.messages) {
            seen.set(m.key?.toString() ?? '', m.value?.toString() ?? '');
            resolveOffset(m.offset);
          }
          await heartbeat();
          if (seen.size >= count) resolve();
        },
      })
      .catch(reject);
  });
  return seen;
}

describe('local Kafka + registry (infra/)', () => {
  it('hands the same addresses to workers via env and inject()', () => {
    expect(process.env.KAFKA_BROKERS).toBe(inject('kafkaBrokers'));
    expect(process.env.SCHEMA_REGISTRY_URL).toBe(inject('schemaRegistryUrl'));
    expect(kafkaEnv().brokers.length).toBeGreaterThan(0);
  });

  it('creates a compacted topic, produces idempotently (acks=-1) and consumes with a group', async () => {
    const k = kafka();
    const topic = unique('infra-smoke-compact');
    await createCompactedTopic(k, topic);

    const admin = k.admin();
    await admin.connect();
    cleanups.push(() => admin.disconnect());
    const configs = await admin.describeConfigs({
      includeSynonyms: false,
      resources: [{ type: 2, name: topic, configNames: ['cleanup.policy'] }],
    });
    expect(configs.resources[0]?.configEntries[0]?.configValue).toBe('compact');

    const producer: Producer = k.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    await producer.connect();
    cleanups.push(() => producer.disconnect());
    const messages = Array.from({ length: 20 }, (_, i) => ({ key: `k${i}`, value: `v${i}` }));
    const acks = await producer.send({ topic, acks: -1, messages });
    expect(acks.every((a) => a.errorCode === 0)).toBe(true);

    const seen = await consumeAll(k, topic, messages.length);
    expect(seen).toEqual(new Map(messages.map((m) => [m.key, m.value])));
  });

  it('commits a transaction that a read_committed consumer sees', async () => {
    const k = kafka();
    const topic = unique('infra-smoke-tx');
    await createCompactedTopic(k, topic);
    const producer = k.producer({
      transactionalId: unique('infra-smoke-tx'),
      idempotent: true,
      maxInFlightRequests: 1,
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    await producer.connect();
    cleanups.push(() => producer.disconnect());
    const tx = await producer.transaction();
    await tx.send({
      topic,
      acks: -1,
      messages: [
        { key: 'a', value: '1' },
        { key: 'b', value: '2' },
      ],
    });
    await tx.commit();
    expect(await consumeAll(k, topic, 2)).toEqual(
      new Map([
        ['a', '1'],
        ['b', '2'],
      ]),
    );
  });

  it('registers an Avro schema in the registry and round-trips a value', async () => {
    const { registryUrl } = kafkaEnv();
    const subject = `${unique('infra-smoke-topic')}-value`;
    const registry = new SchemaRegistry({ host: registryUrl });
    const schema = {
      type: 'record',
      name: 'Smoke',
      namespace: 'dev.loopguard.test',
      fields: [
        { name: 'id', type: 'string' },
        { name: 'n', type: 'long' },
      ],
    };
    const avro = { type: SchemaType.AVRO as const, schema: JSON.stringify(schema) };

    expect(await ensureSubjectCompatibility(registryUrl, subject, 'BACKWARD')).not.toBe('already');
    const { id } = await registry.register(avro, { subject });
    // Second registration is where Apicurio's "NONE" answer used to break register().
    expect(await ensureSubjectCompatibility(registryUrl, subject, 'BACKWARD')).toBe('already');
    expect((await registry.register(avro, { subject })).id).toBe(id);

    const value = { id: 'x-1', n: 42 };
    const encoded = await registry.encode(id, value);
    expect(encoded[0]).toBe(0); // Confluent wire format magic byte
    expect(await registry.decode(encoded)).toEqual(value);
  });
});
