/**
 * Two writers on one data dir (two processes, here two connections) each run a copy projector.
 * Each stop and ledger event is copied once, whichever of them gets there first, and an alert
 * `fleet` publishes on the stops topic between them moves neither off its place, even when a copy
 * lands between the alert's read of the topic and its append.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { MemorySchemaStore } from '../src/events/memory-schema-store.js';
import { CopyProjector } from '../src/log/copy-projector.js';
import { EmbeddedLog } from '../src/log/embedded/embedded-log.js';
import { SqliteSchemaStore } from '../src/log/embedded/sqlite-schema-store.js';
import type { LogRecord } from '../src/log/event-log.js';
import { TOPICS } from '../src/log/event-log.js';
import { EventStore } from '../src/log/event-store.js';
import { LogRunStream } from '../src/log/log-run-stream.js';
import { MemoryLog } from '../src/log/memory-log.js';
import { SAMPLE_EVENTS } from './log-sample-events.js';
import { runEvents } from './support/run-events.js';

const STOPS = SAMPLE_EVENTS.filter((e) => e.type === 'RunStopped').length;
const LEDGER = SAMPLE_EVENTS.filter((e) => e.type.startsWith('Operation')).length;
const n = SAMPLE_EVENTS.length;

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lg-two-writers-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function writer() {
  const log = await EmbeddedLog.open(dir);
  const events = await EventStore.create(log, new SqliteSchemaStore(dir));
  return { log, events, stream: new LogRunStream(events, log) };
}

/** The event ids copied to `topic`, per run, in topic order. */
async function copiedIds(
  log: EmbeddedLog | MemoryLog,
  events: EventStore,
  topic: typeof TOPICS.stops | typeof TOPICS.ledger,
) {
  const ids: string[] = [];
  for (const r of await log.read(topic, 0)) {
    const e = await events.decode(topic, r.value);
    if (e.event.type !== 'FleetLoopDetected') ids.push(e.eventId);
  }
  return ids;
}

it('copies each stop and ledger event once, whichever writer gets there first', async () => {
  const a = await writer();
  const b = await writer();
  // a's projector reads where the copies stand; then b records a run with a stop and ledger events
  // and copies them; then a records again, its projector behind what b copied.
  await a.stream.appendToStream('ra', runEvents('ra', 0, 1), { expectedStreamVersion: 0 });
  await b.stream.appendToStream('rb', runEvents('rb', 0, n), { expectedStreamVersion: 0 });
  await b.events.appendAlerts([
    { eventId: 'fleet-1', runId: 'sig', seq: 1, atMs: 0, event: SAMPLE_EVENTS.at(-1) as never },
  ]);
  await a.stream.appendToStream('ra', runEvents('ra', 1, n), { expectedStreamVersion: 1 });
  await b.stream.appendToStream('rb', runEvents('rb', n, 1), { expectedStreamVersion: n });
  await a.stream.close();
  await b.stream.close();
  const stops = await copiedIds(a.log, a.events, TOPICS.stops);
  const ledger = await copiedIds(a.log, a.events, TOPICS.ledger);
  expect(new Set(stops).size).toBe(stops.length);
  expect(new Set(ledger).size).toBe(ledger.length);
  expect(stops).toHaveLength(2 * STOPS);
  expect(ledger).toHaveLength(2 * LEDGER);
  await a.log.close();
  await b.log.close();
});

/** A log that lets another writer copy a stop right before the next append on the stops topic. */
class CopiesFirst extends MemoryLog {
  before: (() => Promise<void>) | undefined;
  override async appendAfter(topic: string, expectedEnd: number, records: readonly LogRecord[]) {
    const first = topic === TOPICS.stops ? this.before : undefined;
    this.before = undefined;
    await first?.();
    return super.appendAfter(topic, expectedEnd, records);
  }
}

it("an alert whose read of the stops topic another writer's copy overtakes is published after that copy", async () => {
  const log = new CopiesFirst();
  const events = await EventStore.create(log, new MemorySchemaStore());
  const stopped = runEvents('rb', 0, n);
  const alert = { eventId: 'fleet-1', runId: 'sig', seq: 1, atMs: 0, event: SAMPLE_EVENTS.at(-1) as never };
  log.before = async () => {
    const other = new LogRunStream(events, log);
    await other.appendToStream('rb', stopped, { expectedStreamVersion: 0 });
    await other.close();
  };
  await new CopyProjector(log, events).publishAlerts([alert]);
  const stops = await log.read(TOPICS.stops, 0);
  expect(stops.map((r) => r.headers?.['loopguard.type'])).toEqual([
    ...Array(STOPS).fill('RunStopped'),
    'FleetLoopDetected',
  ]);
  // A writer that starts now resumes after the alert's source: it copies the stop no second time.
  const next = new LogRunStream(events, log);
  await next.appendToStream('rc', runEvents('rc', 0, 1), { expectedStreamVersion: 0 });
  await next.close();
  expect(await copiedIds(log, events, TOPICS.stops)).toEqual(
    stopped.filter((e) => e.event.type === 'RunStopped').map((e) => e.eventId),
  );
});
