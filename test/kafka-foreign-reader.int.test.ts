/**
 * Another client can read our records: events written through EventStore on KafkaLog are read
 * back raw with kafkajs and decoded with nothing but avsc and the registry's REST API (magic
 * byte, 4-byte schema id, `GET /schemas/ids/{id}`). No loopguard code on the reading side.
 */
import { randomUUID } from 'node:crypto';
import avsc from 'avsc';
import { Kafka, logLevel } from 'kafkajs';
import { afterEach, describe, expect, it } from 'vitest';
import type { RecordedEvent } from '../src/domain/events.js';
import { RegistrySchemaStore } from '../src/events/registry-schema-store.js';
import { toWire } from '../src/events/serde.js';
import { TOPICS } from '../src/log/event-log.js';
import { EventStore } from '../src/log/event-store.js';
import { KafkaLog } from '../src/log/kafka/kafka-log.js';
import { kafkaEnv } from './setup/kafka-env.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c().catch(() => undefined);
});

const evidence = { fingerprints: ['fp-1'], counts: { repeat: 3 }, thresholds: { repeat: 3 } };
const at = (seq: number) => ({ eventId: `ev-${seq}`, runId: 'run-42', seq, atMs: 1_700_000_000_000 + seq });
const EVENTS: RecordedEvent[] = [
  {
    ...at(1),
    event: {
      type: 'ToolCallRequested',
      callId: 'c1',
      tool: 'http.post',
      argsJson: '{"url":"https://example.test/pay"}',
      fingerprint: 'fp-1',
      operationKey: 'pay-1',
      sideEffect: true,
      costEstimateUsd: 0.25,
      afterUserTurn: false,
      progressVersion: 3,
      similarTo: null,
      similarity: null,
    },
  },
  { ...at(2), event: { type: 'OperationClaimed', operationKey: 'pay-1', callId: 'c1' } },
  {
    ...at(3),
    event: {
      type: 'RunStopped',
      report: {
        terminalState: 'STOPPED_LOOP_GUARD',
        guardReason: 'exact_repeat',
        message: 'the same call ran 3 times',
        completed: ['a'],
        completedOperations: ['pay-1'],
        inDoubtOperations: [],
        gaps: [],
        lastSafeCheckpoint: null,
        unmetPrecondition: null,
        resumeCondition: 'new user input',
        nextAllowedAction: 'ask the user',
        evidence,
        spend: { steps: 3, toolCalls: 3, tokens: 1200, costUsd: 0.75, elapsedMs: 900 },
        children: [],
      },
    },
  },
];

/** The foreign client: raw kafkajs + fetch + avsc. */
async function foreignRead(brokers: string[], registryUrl: string, topic: string, count: number) {
  const kafka = new Kafka({ clientId: 'foreign', brokers, logLevel: logLevel.NOTHING });
  // A short fetch wait: disconnect waits for the running long-poll fetch (5 s by default).
  const consumer = kafka.consumer({ groupId: `foreign-${randomUUID()}`, maxWaitTimeInMs: 100 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const raw: Buffer[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      consumer
        .run({
          eachMessage: async ({ message }) => {
            if (message.value) raw.push(message.value);
            if (raw.length >= count) resolve();
          },
        })
        .catch(reject);
    });
  } finally {
    await consumer.disconnect();
  }
  const types = new Map<number, avsc.Type>();
  const decoded = [];
  for (const value of raw) {
    expect(value[0]).toBe(0);
    const id = value.readUInt32BE(1);
    let type = types.get(id);
    if (!type) {
      const res = await fetch(`${registryUrl}/schemas/ids/${id}`);
      expect(res.status).toBe(200);
      const { schema } = (await res.json()) as { schema: string };
      type = avsc.Type.forSchema(JSON.parse(schema) as avsc.Schema);
      types.set(id, type);
    }
    decoded.push(type.fromBuffer(value.subarray(5)));
  }
  return decoded;
}

describe('a foreign reader', () => {
  it('decodes our topics with only avsc and the registry REST API and gets the same events', async () => {
    const { brokers, registryUrl } = kafkaEnv();
    const suffix = `-${randomUUID()}`;
    const log = await KafkaLog.connect({ brokers, topicSuffix: suffix });
    closers.push(() => log.close());
    const store = await EventStore.create(log, new RegistrySchemaStore({ url: registryUrl }));
    await store.append(EVENTS);

    const runs = await foreignRead(brokers, registryUrl, `${TOPICS.runs}${suffix}`, EVENTS.length);
    expect(runs).toEqual(EVENTS.map(toWire));
    expect(runs.map((r) => [r.runId, r.seq, r.type])).toEqual([
      ['run-42', 1, 'ToolCallRequested'],
      ['run-42', 2, 'OperationClaimed'],
      ['run-42', 3, 'RunStopped'],
    ]);
    expect(runs[0].payload['io.loopguard.events.ToolCallRequested'].argsJson).toBe(
      '{"url":"https://example.test/pay"}',
    );

    const stops = await foreignRead(brokers, registryUrl, `${TOPICS.stops}${suffix}`, 1);
    expect(stops[0].payload['io.loopguard.events.RunStopped'].report.spend.tokens).toBe(1200);
    const ledger = await foreignRead(brokers, registryUrl, `${TOPICS.ledger}${suffix}`, 1);
    expect(ledger[0].payload['io.loopguard.events.OperationClaimed'].operationKey).toBe('pay-1');
  });
});
