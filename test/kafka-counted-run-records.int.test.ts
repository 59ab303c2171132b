/**
 * The batch rule for a consumer group's reader of the runs topic (fleet --follow), on the real
 * broker: from any record it starts at (a group resuming at its committed offset, mid-run, or a
 * re-delivery after a rebalance), it counts exactly the records the run's own stream counts,
 * skipping a losing writer's batch and a zombie append.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { openKafkaStore } from '../src/cli/open-kafka-store.js';
import type { RecordedEvent } from '../src/domain/events.js';
import { RegistrySchemaStore } from '../src/events/registry-schema-store.js';
import { TOPICS } from '../src/log/event-log.js';
import { EventStore, SEQ_HEADER } from '../src/log/event-store.js';
import { CountedRunRecords } from '../src/log/kafka/counted-run-records.js';
import { KafkaLog } from '../src/log/kafka/kafka-log.js';
import { KafkaRunStream } from '../src/log/kafka/kafka-run-stream.js';
import { AFTER_HEADER, BATCH_HEADER } from '../src/log/kafka/run-batch-fold.js';
import { kafkaEnv } from './setup/kafka-env.js';
import { runEvents } from './support/run-events.js';

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

describe('CountedRunRecords on a real broker', () => {
  it("counts from any starting record what the run's stream counts", async () => {
    const env = kafkaEnv();
    const log = await KafkaLog.connect({ brokers: env.brokers, topicSuffix: `-${randomUUID()}` });
    open.push(log);
    const events = await EventStore.create(log, new RegistrySchemaStore({ url: env.registryUrl }), {
      subjectFor: (t) => `${log.physicalName(t)}-value`,
    });
    const stream = new KafkaRunStream(events, log);
    open.push(stream);
    const lost = (after: number, es: readonly RecordedEvent[], batch: string) =>
      log.append(
        TOPICS.runs,
        es.map((e) => events.runRecord(e, { [AFTER_HEADER]: String(after), [BATCH_HEADER]: batch })),
      );
    const all = runEvents('r', 0, 6);
    await stream.appendToStream('r', all.slice(0, 2), { expectedStreamVersion: 0 });
    await lost(0, runEvents('r', 0, 3), 'loser'); // one seq past the winner's head
    await stream.appendToStream('r', all.slice(2, 4), { expectedStreamVersion: 2 });
    await lost(2, runEvents('r', 2, 3), 'zombie');
    await stream.appendToStream('r', all.slice(4), { expectedStreamVersion: 4 });

    const records = (await log.readAll(TOPICS.runs)).filter((r) => r.key === 'r');
    expect(records).toHaveLength(12);
    const flags = async (c: CountedRunRecords, from: number) => {
      const out: boolean[] = [];
      for (const r of records.slice(from)) out.push(await c.counts(r));
      return out;
    };
    const whole = await flags(new CountedRunRecords(log), 0);
    const counted = records.filter((_, i) => whole[i]).map((r) => r.offset);
    const own = await stream.readStream('r');
    expect(own.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(counted).toHaveLength(6);
    // Resuming mid-run: the heads before the first record are folded from the partition.
    for (const from of [1, 2, 4, 6, 8, 11])
      expect(await flags(new CountedRunRecords(log), from)).toEqual(whole.slice(from));
    // A re-delivery (an offset already passed) folds the heads again rather than refusing it.
    const again = new CountedRunRecords(log);
    await flags(again, 0);
    expect(await flags(again, 5)).toEqual(whole.slice(5));
    again.reset();
    expect(await flags(again, 7)).toEqual(whole.slice(7));
  });

  it('follows as a consumer group through a record that counts but cannot be decoded (a dead letter)', async () => {
    const env = kafkaEnv();
    const prefix = `counted-${randomUUID()}.`;
    const store = await openKafkaStore({
      brokers: env.brokers,
      registryUrl: env.registryUrl,
      topicPrefix: prefix,
    });
    open.push(store);
    const all = runEvents('p', 0, 3);
    await store.stream.appendToStream('p', all.slice(0, 1), { expectedStreamVersion: 0 });
    // Seq 2 as a writer's batch whose value is not Avro: it counts, so the run goes on at seq 3.
    const poison = { [SEQ_HEADER]: '2', [AFTER_HEADER]: '1', [BATCH_HEADER]: 'poison' };
    await store.log.append(TOPICS.runs, [{ key: 'p', value: Buffer.from('not avro'), headers: poison }]);
    await store.stream.appendToStream('p', all.slice(2), { expectedStreamVersion: 2 });
    const seen: string[] = [];
    const ctl = new AbortController();
    const following = store.followRuns((e) => void seen.push(e.eventId), ctl.signal, `g-${randomUUID()}`);
    const end = Date.now() + 30_000;
    while (seen.length < 2 && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
    ctl.abort();
    await following;
    expect(seen).toEqual(['p/1', 'p/3']);
  });
});
