/**
 * The Kafka figures, on a real broker and schema registry (ctx.kafka()):
 *
 * - kafka-publish: events/s a fleet of guarded runs publishes through EventStore + KafkaLog (Avro,
 *   registry, idempotent producer, the adapter's batching with its default: no linger), against
 *   Kafka's own ProducerPerformance with the same record size, acks and record count on the same
 *   broker and a 2 ms linger (what batches a Java producer's sends).
 * - kafka-rebuild: events/s `rebuild --kafka` (rebuildFromStream) folds into projections, against a
 *   no-op kafkajs eachBatch consumer over the same topic.
 * - kafka-publish-confluent: the publish figure through @confluentinc/kafka-javascript's
 *   KafkaJS-compatible API (optional dependency), against the same ProducerPerformance figure.
 *
 * The fleet: 200 runs at a time, each appending its events as a live guarded run does (a decision
 * with the request or result it answers, waiting for the ack before its next step), 400 runs and
 * about 76,000 events in all. Every figure is the median of three trials (min and max beside it),
 * the two sides alternating within a trial, so that a burst of load from elsewhere on the machine
 * moves both sides of a ratio alike.
 */
import { rebuildFromStream } from '../src/cli/rebuild-from-stream.js';
import { EventCodec } from '../src/events/codec.js';
import { MemorySchemaStore } from '../src/events/memory-schema-store.js';
import { RegistrySchemaStore } from '../src/events/registry-schema-store.js';
import { type EventLog, TOPICS } from '../src/log/event-log.js';
import { EventStore } from '../src/log/event-store.js';
import { KafkaLog } from '../src/log/kafka/kafka-log.js';
import {
  type Bench,
  type BenchContext,
  type KafkaTarget,
  median,
  resultOfTrials,
  type TrialSample,
} from './bench-result.js';
import { ConfluentLog, loadConfluentKafka } from './kafka-confluent-log.js';
import { driveFleet, type Fleet, makeFleet } from './kafka-fleet.js';
import { noopConsume } from './kafka-noop-consumer.js';
import { runProducerPerformance } from './kafka-producer-perf.js';

/** The linger of ProducerPerformance and of librdkafka (kafka-publish-confluent); loopguard's KafkaLog runs with its default (none). */
const LINGER_MS = 2;
const CONCURRENCY = 200;
const RUNS_PER_WORKER = 2;
const TRIALS = 3;
const RUN = Date.now().toString(36);

const WRITTEN = [TOPICS.runs, TOPICS.stops, TOPICS.ledger] as const;

interface PublishSession {
  readonly target: KafkaTarget;
  readonly fleet: Fleet;
  /** Mean bytes of a runs record: Avro value + key + header, what ProducerPerformance is given. */
  readonly recordSize: number;
  /** Each trial: loopguard's events/s beside ProducerPerformance's records/s. */
  readonly trials: readonly TrialSample[];
  /** A topic prefix whose runs topic holds the fleet exactly once (for the rebuild). */
  readonly filledPrefix: string;
}

let session: Promise<PublishSession> | undefined;
const publishSession = (ctx: BenchContext): Promise<PublishSession> => {
  session ??= runPublishSession(ctx);
  return session;
};

async function runPublishSession(ctx: BenchContext): Promise<PublishSession> {
  const target = await ctx.kafka();
  const fleet = makeFleet(`bench-${RUN}`, CONCURRENCY, RUNS_PER_WORKER);
  const recordSize = await meanRecordSize(fleet);
  ctx.log(
    `  fleet: ${fleet.runs} runs, ${fleet.events} events, ${CONCURRENCY} concurrent; mean runs record ${recordSize} B; ProducerPerformance linger ${LINGER_MS} ms`,
  );
  const trials: TrialSample[] = [];
  for (let trial = 0; trial < TRIALS; trial++) {
    const prefix = `bench-${RUN}-kafkajs-${trial}.`;
    const ms = await withKafkaStore(target, prefix, (store) =>
      driveFleet(fleet, (events) => store.append(events)),
    );
    const rate = fleet.events / (ms / 1000);
    ctx.log(`  loopguard (kafkajs) trial ${trial + 1}: ${Math.round(rate)} events/s (${Math.round(ms)} ms)`);

    const topic = await prepareRunsTopic(target, `bench-${RUN}-tool-${trial}.`);
    const perf = await runProducerPerformance({
      brokers: target.brokers,
      topic,
      numRecords: fleet.events,
      recordSize,
      lingerMs: LINGER_MS,
    });
    trials.push({ value: rate, baseline_value: perf.recordsPerSec });
    ctx.log(`  ProducerPerformance trial ${trial + 1}: ${perf.summary}`);
  }
  return { target, fleet, recordSize, trials, filledPrefix: `bench-${RUN}-kafkajs-0.` };
}

/** EventStore on a fresh KafkaLog with `prefix`, the topics created before `use` starts timing. */
async function withKafkaStore<T>(
  target: KafkaTarget,
  prefix: string,
  use: (store: EventStore, log: KafkaLog) => Promise<T>,
): Promise<T> {
  const log = await KafkaLog.connect({ brokers: target.brokers, topicPrefix: prefix });
  try {
    const store = await openStore(target, log, (t) => log.physicalName(t));
    await Promise.all(WRITTEN.map((t) => log.prepare(t)));
    return await use(store, log);
  } finally {
    await log.close();
  }
}

function openStore(
  target: KafkaTarget,
  log: EventLog,
  physicalName: (t: string) => string,
): Promise<EventStore> {
  return EventStore.create(log, new RegistrySchemaStore({ url: target.registryUrl }), {
    subjectFor: (t) => `${physicalName(t)}-value`,
  });
}

/** Creates the topics of `prefix` as loopguard would (runs: one partition, kept forever); the runs topic's name. */
async function prepareRunsTopic(target: KafkaTarget, prefix: string): Promise<string> {
  const log = await KafkaLog.connect({ brokers: target.brokers, topicPrefix: prefix });
  try {
    return (await log.prepare(TOPICS.runs)).name;
  } finally {
    await log.close();
  }
}

async function meanRecordSize(fleet: Fleet): Promise<number> {
  const codec = await EventCodec.create(new MemorySchemaStore(), 'bench-value');
  let bytes = 0;
  for (const appends of fleet.workers)
    for (const group of appends)
      for (const e of group)
        bytes +=
          codec.encode(e).length + Buffer.byteLength(e.runId) + 'loopguard.type'.length + e.event.type.length;
  return Math.round(bytes / fleet.events);
}

const toolName = (s: PublishSession) =>
  `ProducerPerformance (${s.recordSize} B records, acks=all, linger.ms=${LINGER_MS}, idempotent)`;

const kafkaPublish: Bench = {
  name: 'kafka-publish',
  ownTrials: true,
  async run(ctx) {
    const s = await publishSession(ctx);
    return [resultOfTrials('kafka-publish', 'events/s', s.trials, toolName(s))];
  },
};

const kafkaRebuild: Bench = {
  name: 'kafka-rebuild',
  ownTrials: true,
  async run(ctx) {
    const s = await publishSession(ctx);
    const trials: TrialSample[] = [];
    for (let trial = 0; trial < TRIALS; trial++) {
      const log = await KafkaLog.connect({ brokers: s.target.brokers, topicPrefix: s.filledPrefix });
      try {
        const base = await noopConsume(s.target.brokers, log.physicalName(TOPICS.runs));
        if (base.records !== s.fleet.events)
          throw new Error(`no-op consumer read ${base.records} of ${s.fleet.events} records`);
        const events = await openStore(s.target, log, (t) => log.physicalName(t));
        const r = await rebuildFromStream(log.runStream(events));
        const runs = r.projections.runs.allSummaries().length;
        if (r.records !== s.fleet.events || runs !== s.fleet.runs)
          throw new Error(
            `rebuild folded ${r.records} records into ${runs} runs; expected ${s.fleet.events} and ${s.fleet.runs}`,
          );
        trials.push({ value: r.records / r.seconds, baseline_value: base.records / (base.ms / 1000) });
        ctx.log(
          `  trial ${trial + 1}: no-op consumer ${Math.round(base.records / (base.ms / 1000))} records/s (${Math.round(base.ms)} ms), rebuild ${Math.round(r.records / r.seconds)} events/s (${Math.round(r.seconds * 1000)} ms)`,
        );
      } finally {
        await log.close();
      }
    }
    return [resultOfTrials('kafka-rebuild', 'events/s', trials, 'no-op kafkajs eachBatch consumer')];
  },
};

const kafkaPublishConfluent: Bench = {
  name: 'kafka-publish-confluent',
  ownTrials: true,
  async run(ctx) {
    const loaded = await loadConfluentKafka();
    if ('unavailable' in loaded) {
      ctx.log(`kafka-publish-confluent: unavailable: ${loaded.unavailable}`);
      return [];
    }
    const s = await publishSession(ctx);
    const trials: TrialSample[] = [];
    for (let trial = 0; trial < TRIALS; trial++) {
      const prefix = `bench-${RUN}-confluent-${trial}.`;
      // Topics are created by KafkaLog, so they are laid out exactly as in the kafkajs trials.
      const layout = await KafkaLog.connect({ brokers: s.target.brokers, topicPrefix: prefix });
      const physicalName = (t: string) => layout.physicalName(t);
      try {
        await Promise.all(WRITTEN.map((t) => layout.prepare(t)));
      } finally {
        await layout.close();
      }
      const log = await ConfluentLog.connect(loaded.Kafka, {
        brokers: s.target.brokers,
        physicalName,
        lingerMs: LINGER_MS,
      });
      try {
        const store = await openStore(s.target, log, physicalName);
        const ms = await driveFleet(s.fleet, (events) => store.append(events));
        const rate = s.fleet.events / (ms / 1000);
        trials.push({ value: rate, baseline_value: s.trials[trial]?.baseline_value ?? Number.NaN });
        ctx.log(
          `  loopguard (librdkafka ${loaded.version}) trial ${trial + 1}: ${Math.round(rate)} events/s (${Math.round(ms)} ms)`,
        );
      } finally {
        await log.close();
      }
    }
    const librdkafka = median(trials.map((t) => t.value));
    ctx.log(
      `  librdkafka / kafkajs publish: ${(librdkafka / median(s.trials.map((t) => t.value))).toFixed(2)}x`,
    );
    return [resultOfTrials('kafka-publish-confluent', 'events/s', trials, toolName(s))];
  },
};

export const kafkaBenches: Bench[] = [kafkaPublish, kafkaRebuild, kafkaPublishConfluent];
