import { RegistrySchemaStore } from '../events/registry-schema-store.js';
import { TOPICS } from '../log/event-log.js';
import { EventStore } from '../log/event-store.js';
import { CountedRunRecords } from '../log/kafka/counted-run-records.js';
import { DecodingConsumer } from '../log/kafka/decoding-consumer.js';
import { KafkaLog } from '../log/kafka/kafka-log.js';
import { chooseSecretKey } from '../runtime/secret-key.js';
import { untilAborted } from './command-context.js';
import type { KafkaConfig } from './kafka-config.js';
import type { OpenStore } from './open-store.js';
import { rebuildFromStream } from './rebuild-from-stream.js';

/** KafkaLog + the registry + EventStore, subjects named after the real (prefixed) topics. */
export async function openKafkaStore(cfg: KafkaConfig): Promise<OpenStore & { readonly log: KafkaLog }> {
  const log = await KafkaLog.connect({
    brokers: cfg.brokers,
    clientId: 'loopguard-cli',
    ...(cfg.topicPrefix ? { topicPrefix: cfg.topicPrefix } : {}),
  });
  try {
    const events = await EventStore.create(log, new RegistrySchemaStore({ url: cfg.registryUrl }), {
      subjectFor: (t) => `${log.physicalName(t)}-value`,
    });
    const stream = log.runStream(events);
    return {
      log,
      events,
      stream,
      where: `kafka ${cfg.brokers.join(',')} (topics ${log.physicalName('loopguard.*')})`,
      rebuild: async (onProgress) => (await rebuildFromStream(stream, onProgress)).projections,
      scan: (apply) => stream.readAll(apply),
      followRuns: async (apply, signal, groupId) => {
        // Only what counts, by the batch rule `scan` applies: a losing writer's batch is not the run's.
        const counted = new CountedRunRecords(log);
        const consumer = await DecodingConsumer.start(log, {
          topic: TOPICS.runs,
          groupId,
          decode: (value) => events.decode(TOPICS.runs, value),
          // Before decoding: a record of a run that does not count is neither applied nor a dead letter.
          admit: (record) => counted.counts(record),
          handle: (e) => apply(e),
          onJoin: () => counted.reset(),
        });
        await untilAborted(signal);
        await consumer.stop();
      },
      eventCount: () => log.recordCount(TOPICS.runs),
      // From the record keys alone: no decoding needed.
      knownRunIds: async () => {
        const ids = new Set<string>();
        await log.scan(TOPICS.runs, (r) => void ids.add(r.key));
        return ids;
      },
      readStops: () => events.readStops(0),
      publishAlerts: (records) => events.appendAlerts(records),
      secretKey: (env) =>
        chooseSecretKey(
          undefined,
          { kind: 'shared', where: 'replay --kafka (workers share the topics)' },
          env,
        ),
      close: async () => {
        await stream.close();
        await log.close();
      },
    };
  } catch (e) {
    await log.close();
    throw e;
  }
}
