/**
 * Kafka-only behaviour of the per-run stream on a real broker: loading from a snapshot reads only
 * the tail after it, and a zombie append (one that timed out for its writer and lands after a
 * newer writer's) changes nothing for any reader, nor for a resume.
 */
import { randomUUID } from 'node:crypto';
import avsc from 'avsc';
import { afterEach, describe, expect, it } from 'vitest';
import { initialState } from '../src/domain/run-state.js';
import { RegistrySchemaStore } from '../src/events/registry-schema-store.js';
import type { CompatibilityLevel } from '../src/events/subject-compatibility.js';
import { frame } from '../src/events/wire.js';
import { TOPICS } from '../src/log/event-log.js';
import { EventStore } from '../src/log/event-store.js';
import { KafkaLog } from '../src/log/kafka/kafka-log.js';
import { KafkaRunStream } from '../src/log/kafka/kafka-run-stream.js';
import { AFTER_HEADER, BATCH_HEADER } from '../src/log/kafka/run-batch-fold.js';
import { RunSnapshotCodec } from '../src/snapshots/index.js';
import { kafkaEnv } from './setup/kafka-env.js';
import { PREVIOUS_RUN_SNAPSHOT_SCHEMA, previousRunSnapshotReader } from './support/previous-release.js';
import { foldEvents, runEvents } from './support/run-events.js';
import { until } from './support/until.js';

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

async function setup(compatibility: CompatibilityLevel = 'BACKWARD') {
  const env = kafkaEnv();
  const log = await KafkaLog.connect({ brokers: env.brokers, topicSuffix: `-${randomUUID()}` });
  open.push(log);
  const schemas = new RegistrySchemaStore({ url: env.registryUrl, compatibility });
  const events = await EventStore.create(log, schemas, {
    subjectFor: (t) => `${log.physicalName(t)}-value`,
  });
  const stream = (): KafkaRunStream => {
    const s = new KafkaRunStream(events, log);
    open.push(s);
    return s;
  };
  return { log, events, stream };
}

describe('KafkaRunStream on a real broker', () => {
  it('loads a run from its newest snapshot and the records after it only', async () => {
    const { stream } = await setup();
    const writer = stream();
    const all = runEvents('snap', 0, 9);
    await writer.appendToStream('snap', all.slice(0, 6), { expectedStreamVersion: 0 });
    writer.snapshot(foldEvents(initialState('snap'), all.slice(0, 6)));
    await writer.appendToStream('snap', all.slice(6), { expectedStreamVersion: 6 });
    const reader = stream();
    let loaded = await reader.load('snap');
    for (let i = 0; loaded.snapshot === null && i < 50; i++) {
      await new Promise((r) => setTimeout(r, 100));
      loaded = await reader.load('snap');
    }
    expect(loaded.snapshot?.seq).toBe(6);
    expect(loaded.events.map((e) => e.seq)).toEqual([7, 8, 9]);
    expect(foldEvents(loaded.snapshot ?? initialState('snap'), loaded.events)).toEqual(
      foldEvents(initialState('snap'), all),
    );
  });

  it('sends a due snapshot from the next turn of the event loop, never inside the call that recorded the state', async () => {
    const { log, stream } = await setup();
    const writer = stream();
    const all = runEvents('later', 0, 22);
    await writer.appendToStream('later', all.slice(0, 6), { expectedStreamVersion: 0 });
    writer.snapshot(foldEvents(initialState('later'), all.slice(0, 6)));
    // The first snapshot opens the snapshots topic; the one under test then has nothing to wait for.
    await until(
      'the first snapshot',
      async () => (await log.readKey(TOPICS.snapshots, 'later')).length === 1,
    );
    await writer.appendToStream('later', all.slice(6), { expectedStreamVersion: 6 });
    const appended: string[] = [];
    const append = log.append.bind(log);
    log.append = (topic, records) => {
      appended.push(topic);
      return append(topic, records);
    };
    writer.snapshot(foldEvents(initialState('later'), all));
    // What a guarded call does between recording its state and running its tool is microtasks.
    for (let i = 0; i < 100; i++) await Promise.resolve();
    expect(appended).toEqual([]);
    await until(
      'the snapshot at seq 22',
      async () => (await log.readKey(TOPICS.snapshots, 'later')).length === 2,
    );
    expect(appended).toEqual([TOPICS.snapshots]);
    expect((await stream().load('later')).snapshot?.seq).toBe(22);
  });

  it('loads a run from a snapshot written before the snapshot format had a version (its bare state)', async () => {
    const { log, events, stream } = await setup();
    // A topic written by an older loopguard: its schema registered first, its record on the topic.
    const old = avsc.Type.forSchema(PREVIOUS_RUN_SNAPSHOT_SCHEMA);
    const oldId = await events.schemas.register(
      events.subjectFor(TOPICS.snapshots),
      JSON.stringify(old.schema()),
    );
    const writer = stream();
    const all = runEvents('old', 0, 9);
    await writer.appendToStream('old', all.slice(0, 6), { expectedStreamVersion: 0 });
    await writer.appendToStream('old', all.slice(6), { expectedStreamVersion: 6 });
    const sixth = (await log.readKey(TOPICS.runs, 'old'))[5];
    const state = foldEvents(initialState('old'), all.slice(0, 6));
    const record = {
      runId: 'old',
      seq: 6,
      runsPartition: await log.partitionOfKey(TOPICS.runs, 'old'),
      runsOffset: sixth?.offset ?? -1,
      batch: sixth?.headers?.[BATCH_HEADER] ?? null,
      stateJson: JSON.stringify(state),
    };
    await log.append(TOPICS.snapshots, [{ key: 'old', value: frame(oldId, old.toBuffer(record)) }]);
    const loaded = await stream().load('old');
    expect(loaded.snapshot).toEqual(state);
    expect(loaded.events.map((e) => e.seq)).toEqual([7, 8, 9]);
    expect(foldEvents(loaded.snapshot ?? initialState('old'), loaded.events)).toEqual(
      foldEvents(initialState('old'), all),
    );
    // And this version's writer records its own beside it under the same subject.
    writer.snapshot(foldEvents(initialState('old'), all));
    let newer = await stream().load('old');
    for (let i = 0; newer.events.length > 0 && i < 50; i++) {
      await new Promise((r) => setTimeout(r, 100));
      newer = await stream().load('old');
    }
    expect(newer).toEqual({ snapshot: foldEvents(initialState('old'), all), events: [] });
  });

  it('writes snapshots the release before the format had a version still reads (rolling upgrade)', async () => {
    // FULL: the registry refuses this version's schema unless it reads the older one's records
    // (BACKWARD) and the older one reads its records (FORWARD).
    const { log, events, stream } = await setup('FULL');
    const subject = events.subjectFor(TOPICS.snapshots);
    const previous = await previousRunSnapshotReader(events.schemas, subject);
    await expect(RunSnapshotCodec.create(events.schemas, subject)).resolves.toBeInstanceOf(RunSnapshotCodec);
    const writer = stream();
    const all = runEvents('up', 0, 6);
    await writer.appendToStream('up', all, { expectedStreamVersion: 0 });
    const state = foldEvents(initialState('up'), all);
    writer.snapshot(state);
    let written = await log.readKey(TOPICS.snapshots, 'up');
    for (let i = 0; written.length === 0 && i < 50; i++) {
      await new Promise((r) => setTimeout(r, 100));
      written = await log.readKey(TOPICS.snapshots, 'up');
    }
    const value = written[0]?.value;
    if (value === undefined || value === null) throw new Error('no snapshot record was written');
    expect(await previous(Buffer.from(value))).toEqual({ runId: 'up', seq: 6, state });
    expect(await stream().load('up')).toEqual({ snapshot: state, events: [] });
  });

  it('ignores a zombie append that lands after a newer writer took the seq', async () => {
    const { log, events, stream } = await setup();
    const old = stream();
    await old.appendToStream('z', runEvents('z', 0, 2), { expectedStreamVersion: 0 });
    // The new owner appends at seq 2; then the old owner's append at seq 2, which its writer saw
    // time out, lands: the same records a KafkaRunStream would have sent, its own batch id.
    const fresh = stream();
    const mine = runEvents('z', 2, 2).map((e) => ({ ...e, eventId: `fresh-${e.seq}` }));
    await fresh.appendToStream('z', mine, { expectedStreamVersion: 2 });
    const zombie = runEvents('z', 2, 3).map((e) => ({ ...e, eventId: `zombie-${e.seq}` }));
    await log.append(
      TOPICS.runs,
      zombie.map((e) => events.runRecord(e, { [AFTER_HEADER]: '2', [BATCH_HEADER]: 'zombie/1' })),
    );
    for (const reader of [stream(), old, fresh]) {
      expect((await reader.readStream('z')).map((e) => e.eventId)).toEqual([
        'z/1',
        'z/2',
        'fresh-3',
        'fresh-4',
      ]);
    }
    const loaded = await stream().load('z');
    expect(loaded.events.map((e) => e.eventId)).toEqual(['z/1', 'z/2', 'fresh-3', 'fresh-4']);
    // The old owner, told it lost, cannot write at the seq it last knew either.
    await expect(
      old.appendToStream('z', runEvents('z', 2, 1), { expectedStreamVersion: 2 }),
    ).rejects.toMatchObject({ code: 'conflict' });
    await fresh.appendToStream('z', runEvents('z', 4, 1), { expectedStreamVersion: 4 });
    expect((await fresh.readStream('z', 5)).map((e) => e.seq)).toEqual([5]);
  });
});
