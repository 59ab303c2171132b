/**
 * Child process of the Kafka kill-at-every-step test. `writer`: records runs victim-0..3 through
 * the Kafka run stream and SIGKILLs itself right after its last runs append when asked
 * (`runs-durable`). `projector`: runs the copy projector and SIGKILLs itself at the named step,
 * or exits once everything is copied (`none`).
 * Run: node --import tsx test/kafka-copy-kill-child.ts <writer|projector> <topic suffix> <step | none>
 */
import { RegistrySchemaStore } from '../src/events/registry-schema-store.js';
import { EventStore } from '../src/log/event-store.js';
import { KafkaCopyProjector } from '../src/log/kafka/kafka-copy-projector.js';
import { KafkaLog } from '../src/log/kafka/kafka-log.js';
import { KafkaRunStream } from '../src/log/kafka/kafka-run-stream.js';
import { SAMPLE_EVENTS } from './log-sample-events.js';
import { KILL_RUNS, KILL_SESSION_MS } from './support/copy-kill.js';
import { runEvents } from './support/run-events.js';

/** How long a closed child may take to exit (a consumer still joining is let finish first). */
const EXIT_WAIT_MS = 20_000;
const [role, suffix, killAt] = process.argv.slice(2);
if (role === undefined || suffix === undefined || killAt === undefined)
  throw new Error('usage: kafka-copy-kill-child <writer|projector> <suffix> <step>');
const log = await KafkaLog.connect({
  brokers: (process.env.KAFKA_BROKERS ?? '').split(','),
  topicSuffix: suffix,
});
const events = await EventStore.create(
  log,
  new RegistrySchemaStore({ url: process.env.SCHEMA_REGISTRY_URL ?? '' }),
  { subjectFor: (t) => `${log.physicalName(t)}-value` },
);
if (role === 'writer') {
  const stream = new KafkaRunStream(events, log);
  const half = Math.floor(SAMPLE_EVENTS.length / 2);
  for (const run of KILL_RUNS) {
    await stream.appendToStream(run, runEvents(run, 0, half), { expectedStreamVersion: 0 });
    await stream.appendToStream(run, runEvents(run, half, SAMPLE_EVENTS.length - half), {
      expectedStreamVersion: half,
    });
  }
  if (killAt === 'runs-durable') process.kill(process.pid, 'SIGKILL');
  await stream.close();
} else {
  const projector = await KafkaCopyProjector.start({
    log,
    events,
    sessionTimeoutMs: KILL_SESSION_MS,
    onStep: (step) => {
      if (step === killAt) process.kill(process.pid, 'SIGKILL');
    },
  });
  await projector.caughtUp();
  await projector.stop();
}
await log.close();
// Everything is closed: the process must now end by itself. One that does not (a kafkajs client
// left running) fails here with what is keeping it alive, instead of as the test's timeout.
setTimeout(() => {
  process.stderr.write(
    `kafka-copy-kill-child ${role}: still running ${EXIT_WAIT_MS} ms after close: ${process
      .getActiveResourcesInfo()
      .join(', ')}\n`,
  );
  process.exit(3);
}, EXIT_WAIT_MS).unref();
