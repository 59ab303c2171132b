/**
 * Child process of the kill-at-every-step test: records one run (a stop and ledger events among
 * its events) through the embedded run stream and SIGKILLs itself at the named step boundary.
 * Run: node --import tsx test/stream-kill-writer.ts <dir> <step | none>
 */
import { EmbeddedLog } from '../src/log/embedded/embedded-log.js';
import { SqliteSchemaStore } from '../src/log/embedded/sqlite-schema-store.js';
import { EventStore } from '../src/log/event-store.js';
import { LogRunStream } from '../src/log/log-run-stream.js';
import { SAMPLE_EVENTS } from './log-sample-events.js';
import { runEvents } from './support/run-events.js';

const [dir, killAt] = process.argv.slice(2);
if (dir === undefined || killAt === undefined) throw new Error('usage: stream-kill-writer <dir> <step>');
const log = await EmbeddedLog.open(dir);
const events = await EventStore.create(log, new SqliteSchemaStore(dir));
const stream = new LogRunStream(events, log, (step) => {
  if (step === killAt) process.kill(process.pid, 'SIGKILL');
});
await stream.appendToStream('victim', runEvents('victim', 0, SAMPLE_EVENTS.length), {
  expectedStreamVersion: 0,
});
await log.close();
