/**
 * DecodingConsumer on a real broker with the real codec and registry: undecodable records go to
 * the dead-letter topic with reason and origin, good records around them are still handled, and
 * offsets are committed only for what was handled.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RecordedEvent } from '../src/domain/events.js';
import { EventCodec } from '../src/events/codec.js';
import { RegistrySchemaStore } from '../src/events/registry-schema-store.js';
import { TOPICS } from '../src/log/event-log.js';
import { DecodingConsumer, DLQ_HEADERS } from '../src/log/kafka/decoding-consumer.js';
import { KafkaLog } from '../src/log/kafka/kafka-log.js';
import { kafkaEnv } from './setup/kafka-env.js';

const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const s of stops.splice(0).reverse()) await s().catch(() => undefined);
});

const requested = (runId: string, seq: number): RecordedEvent => ({
  eventId: `${runId}-${seq}`,
  runId,
  seq,
  atMs: 1_700_000_000_000 + seq,
  event: {
    type: 'ToolCallRequested',
    callId: `call-${seq}`,
    tool: 'shell',
    argsJson: JSON.stringify({ cmd: `ls ${seq}` }),
    fingerprint: `fp-${seq}`,
    operationKey: null,
    sideEffect: false,
    costEstimateUsd: null,
    afterUserTurn: false,
    progressVersion: null,
    similarTo: null,
    similarity: null,
  },
});

describe('DecodingConsumer', () => {
  it('dead-letters bad magic, unknown schema and truncated records, handles the rest, counts 3', async () => {
    const { brokers, registryUrl } = kafkaEnv();
    const log = await KafkaLog.connect({ brokers, topicSuffix: `-${randomUUID()}` });
    stops.push(() => log.close());
    const codec = await EventCodec.create(
      new RegistrySchemaStore({ url: registryUrl }),
      `${TOPICS.runs}-value`,
    );

    const good = [0, 1, 2, 3].map((i) => requested('run-1', i + 1));
    const goodBytes = good.map((e) => codec.encode(e));
    const first = goodBytes[0] as Buffer;
    const badMagic = Buffer.concat([Buffer.from([1]), first.subarray(1)]);
    const unknownId = Buffer.from(first);
    unknownId.writeUInt32BE(0x7fff_fff0, 1);
    const truncated = first.subarray(0, first.length - 6);
    const values = [goodBytes[0], badMagic, goodBytes[1], unknownId, goodBytes[2], truncated, goodBytes[3]];
    await log.append(
      TOPICS.runs,
      values.map((value, i) => ({ key: 'run-1', value: value as Buffer, headers: { n: String(i) } })),
    );

    const handled: Array<{ event: RecordedEvent; offset: number }> = [];
    const groupId = `dlq-test-${randomUUID()}`;
    const start = () =>
      DecodingConsumer.start(log, {
        topic: TOPICS.runs,
        groupId,
        decode: (v) => codec.decode(v),
        handle: (event, record) => {
          handled.push({ event, offset: record.offset });
        },
      });
    const consumer = await start();
    stops.push(() => consumer.stop());

    await vi.waitFor(() => expect(consumer.handled + consumer.deadLettered).toBe(7), { timeout: 30_000 });
    expect(consumer.deadLettered).toBe(3);
    expect(handled.map((h) => h.offset)).toEqual([0, 2, 4, 6]);
    expect(handled.map((h) => h.event)).toEqual(good);

    const dead = await log.read(TOPICS.dlq, 0);
    const partition = String(await log.partitionOfKey(TOPICS.runs, 'run-1'));
    expect(dead.map((d) => d.headers?.[DLQ_HEADERS.code])).toEqual([
      'bad_magic',
      'unknown_schema',
      'truncated',
    ]);
    expect(dead.map((d) => d.headers?.[DLQ_HEADERS.offset])).toEqual(['1', '3', '5']);
    for (const d of dead) {
      expect(d.key).toBe('run-1');
      expect(d.headers?.[DLQ_HEADERS.topic]).toBe(TOPICS.runs);
      expect(d.headers?.[DLQ_HEADERS.partition]).toBe(partition);
      expect(d.headers?.[DLQ_HEADERS.reason]?.length).toBeGreaterThan(0);
    }
    expect(dead.map((d) => d.value)).toEqual([badMagic, unknownId, truncated]);

    // Offsets were committed as records were handled: the group's next member starts after them.
    await consumer.stop();
    await log.append(TOPICS.runs, [{ key: 'run-1', value: codec.encode(requested('run-1', 5)) }]);
    const again = await start();
    stops.push(() => again.stop());
    await vi.waitFor(() => expect(again.handled).toBe(1), { timeout: 30_000 });
    expect(again.deadLettered).toBe(0);
    expect(handled.at(-1)?.offset).toBe(7);
  });
});
