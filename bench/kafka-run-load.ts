/**
 * kafka-run-load: loading one run on Kafka (KafkaRunStream.load: the run's newest snapshot, then
 * only the records of its partition after it) as the runs topic grows: the target run among
 * 500, 5,000 and 50,000 events of other runs, each in topics of its own, the loads taken in
 * turn after a warm-up (the first load also folds the topic's headers once per process).
 */
import { randomUUID } from 'node:crypto';
import { initialState } from '../src/domain/index.js';
import { RegistrySchemaStore } from '../src/events/registry-schema-store.js';
import { EventStore } from '../src/log/event-store.js';
import { KafkaLog } from '../src/log/kafka/kafka-log.js';
import { KafkaRunStream } from '../src/log/kafka/kafka-run-stream.js';
import { foldRun } from '../src/machines/index.js';
import { type Bench, type KafkaTarget, percentile, result } from './bench-result.js';
import { sampleEvents } from './embedded-benches.js';
import { TARGET, targetRun } from './run-load.js';

const BASE = 500;
const LOADS = 15;

interface Filled {
  readonly log: KafkaLog;
  readonly stream: KafkaRunStream;
}

async function fill(
  target: KafkaTarget,
  others: ReturnType<typeof sampleEvents>,
  run: ReturnType<typeof targetRun>,
): Promise<Filled> {
  const log = await KafkaLog.connect({ brokers: target.brokers, topicPrefix: `bench-load-${randomUUID()}.` });
  const events = await EventStore.create(log, new RegistrySchemaStore({ url: target.registryUrl }), {
    subjectFor: (t) => `${log.physicalName(t)}-value`,
  });
  const writer = new KafkaRunStream(events, log);
  const half = Math.floor(run.length / 2);
  await writer.appendToStream(TARGET, run.slice(0, half), { expectedStreamVersion: 0 });
  const pending: Promise<void>[] = [];
  for (let i = 0; i < others.length; i += 500) pending.push(events.append(others.slice(i, i + 500)));
  await Promise.all(pending);
  await writer.appendToStream(TARGET, run.slice(half), { expectedStreamVersion: half });
  writer.snapshot(run.reduce(foldRun, initialState(TARGET)));
  await writer.close();
  return { log, stream: new KafkaRunStream(events, log) };
}

export const kafkaRunLoadBench: Bench = {
  name: 'kafka-run-load',
  async run(ctx) {
    const target = await ctx.kafka();
    const run = targetRun();
    const all = sampleEvents(BASE * 100);
    const sizes = [BASE, BASE * 10, BASE * 100];
    const filled: Filled[] = [];
    try {
      for (const n of sizes) filled.push(await fill(target, all.slice(0, n), run));
      const times: number[][] = sizes.map(() => []);
      for (let i = 0; i < LOADS + 2; i++)
        for (const [k, f] of filled.entries()) {
          const t0 = performance.now();
          const loaded = await f.stream.load(TARGET);
          const us = (performance.now() - t0) * 1000;
          const seq = (loaded.events.at(-1) ?? { seq: loaded.snapshot?.seq ?? 0 }).seq;
          if (seq !== run.length) throw new Error(`loaded up to seq ${seq} of ${run.length}`);
          if (i >= 2) times[k]?.push(us);
        }
      const costs = times.map((t) => percentile(t, 50));
      const base = costs[0] ?? Number.NaN;
      ctx.log(
        `  snapshot found on the last load: ${(await filled[2]?.stream.load(TARGET))?.snapshot !== null}`,
      );
      return sizes.map((n, i) =>
        result(`kafka-run-load-${n}`, 'us/load', costs[i] ?? Number.NaN, `kafka-run-load-${BASE}`, base),
      );
    } finally {
      for (const f of filled) {
        await f.stream.close();
        await f.log.close();
      }
    }
  },
};
