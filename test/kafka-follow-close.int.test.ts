/**
 * On a real broker, closing a partition follower (the fold behind the run stream's append check,
 * the ledger and the snapshots) releases every kafkajs consumer it started, even one closed while
 * it is still joining its group: a consumer left running after close keeps fetching on its own
 * reconnected sockets, and the process that closed it never exits (the kill test's writer that
 * hung). And a wait for the fold that the close makes unanswerable fails at once, clearly,
 * instead of resolving as if the fold had got there.
 */
import { randomUUID } from 'node:crypto';
import type { Consumer, ConsumerConfig, Kafka } from 'kafkajs';
import { afterEach, describe, expect, it } from 'vitest';
import { LoopguardError } from '../src/domain/errors.js';
import { RegistrySchemaStore } from '../src/events/registry-schema-store.js';
import { TOPICS } from '../src/log/event-log.js';
import { EventStore } from '../src/log/event-store.js';
import { KafkaLog } from '../src/log/kafka/kafka-log.js';
import { KafkaRunStream } from '../src/log/kafka/kafka-run-stream.js';
import { PartitionFollower } from '../src/log/kafka/partition-follower.js';
import { kafkaEnv } from './setup/kafka-env.js';
import { runEvents } from './support/run-events.js';

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

async function connect(): Promise<KafkaLog> {
  const log = await KafkaLog.connect({ brokers: kafkaEnv().brokers, topicSuffix: `-${randomUUID()}` });
  open.push(log);
  return log;
}

/**
 * The log's own kafkajs client, with every consumer it makes watched: how many requests the
 * consumers send, and a hook called right after each `run()` (the consumer is then joining its
 * group: that takes round trips to the broker, so it cannot have finished yet).
 */
function watched(kafka: Kafka, afterRun: (n: number) => void) {
  const seen = { runs: 0, requests: 0, consumers: 0, disconnected: new Set<Consumer>() };
  const client = Object.create(kafka) as Kafka;
  client.consumer = (config: ConsumerConfig) => {
    const c = kafka.consumer(config);
    seen.consumers++;
    c.on(c.events.REQUEST, () => {
      seen.requests++;
    });
    c.on(c.events.DISCONNECT, () => {
      seen.disconnected.add(c);
    });
    const run = c.run.bind(c);
    c.run = (cfg) => {
      const started = run(cfg);
      afterRun(++seen.runs);
      return started;
    };
    return c;
  };
  return { client, seen };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('PartitionFollower close on a real broker', () => {
  it('closed while its consumers are joining their groups, it leaves none of them running', async () => {
    const log = await connect();
    const info = await log.prepare(TOPICS.runs);
    let closing: Promise<void> | undefined;
    let follower: PartitionFollower | undefined;
    const { client, seen } = watched(log.kafka, (n) => {
      // The last follow's consumer has just been told to run: close now, mid-join.
      if (n === info.partitions) closing = follower?.close();
    });
    follower = new PartitionFollower(client, info.name, info.partitions, () => undefined);
    while (closing === undefined) await sleep(10);
    await closing;
    // close() waits a bounded time; a consumer still joining then finishes in the background.
    while (seen.disconnected.size < seen.consumers) await sleep(50);
    expect(seen.consumers).toBeGreaterThanOrEqual(info.partitions);
    // What a consumer still running after its disconnect does: fetch (every 100 ms) and heartbeat.
    const before = seen.requests;
    await sleep(3_000);
    expect(seen.requests - before).toBe(0);
  }, 60_000);

  it('a wait for an offset the fold will never reach fails with log_closed as soon as it is closed', async () => {
    const log = await connect();
    const info = await log.prepare(TOPICS.runs);
    const follower = new PartitionFollower(log.kafka, info.name, info.partitions, () => undefined);
    open.push(follower);
    await follower.foldedTo(0, 0);
    const waiting = follower.foldedTo(1, 1_000_000).then(
      () => ({ outcome: 'resolved' as unknown, at: performance.now() }),
      (e: unknown) => ({ outcome: e, at: performance.now() }),
    );
    await sleep(100);
    const closedAt = performance.now();
    await follower.close();
    const { outcome, at } = await waiting;
    expect(outcome).toBeInstanceOf(LoopguardError);
    expect((outcome as LoopguardError).code).toBe('log_closed');
    expect((outcome as LoopguardError).message).toContain('partition 1 up to offset 1000000');
    // The close itself answers the waiter, not a stall timer seconds later.
    expect(at - closedAt).toBeLessThan(1_000);
    await expect(follower.foldedTo(0, 1)).rejects.toMatchObject({ code: 'log_closed' });
  }, 60_000);

  it('a run stream used after close fails with log_closed and starts no follow again', async () => {
    const log = await connect();
    const events = await EventStore.create(log, new RegistrySchemaStore({ url: kafkaEnv().registryUrl }), {
      subjectFor: (t) => `${log.physicalName(t)}-value`,
    });
    const { client, seen } = watched(log.kafka, () => undefined);
    const stream = new KafkaRunStream(
      events,
      Object.assign(Object.create(log) as KafkaLog, { kafka: client }),
    );
    const first = runEvents('closing-run', 0, 2);
    expect(await stream.appendToStream('closing-run', first, { expectedStreamVersion: 0 })).toEqual({
      nextExpectedStreamVersion: 2,
    });
    const followsBefore = seen.runs;
    await stream.close();
    await expect(
      stream.appendToStream('closing-run', runEvents('closing-run', 2, 1), { expectedStreamVersion: 2 }),
    ).rejects.toMatchObject({ code: 'log_closed' });
    await expect(stream.load('closing-run')).rejects.toMatchObject({ code: 'log_closed' });
    expect(seen.runs).toBe(followsBefore);
  }, 60_000);
});
