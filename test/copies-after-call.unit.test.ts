/**
 * When the stops and ledger copies (copy-projector.ts) exist, seen from another connection to the
 * data dir: a stop before the call that stopped returns (alerting follows the stops topic), a side
 * effect's ledger copies once the guard is closed (they are made while the caller goes on).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { MemorySchemaStore } from '../src/events/memory-schema-store.js';
import { EmbeddedLog } from '../src/log/embedded/embedded-log.js';
import { SqliteSchemaStore } from '../src/log/embedded/sqlite-schema-store.js';
import { type LogRecord, TOPICS } from '../src/log/event-log.js';
import { EventStore } from '../src/log/event-store.js';
import { MemoryLedger } from '../src/log/memory-ledger.js';
import { MemoryLog } from '../src/log/memory-log.js';
import { createGuard } from '../src/runtime/index.js';

/** A log whose appends to one copy topic wait until `open()`: a copy that takes its time. */
class HeldCopies extends MemoryLog {
  private release: () => void = () => undefined;
  private readonly gate = new Promise<void>((r) => {
    this.release = r;
  });
  constructor(private readonly held: string) {
    super();
  }
  open(): void {
    this.release();
  }
  override append(topic: string, records: readonly LogRecord[]): Promise<number[]> {
    return topic === this.held
      ? this.gate.then(() => super.append(topic, records))
      : super.append(topic, records);
  }
}

/** A guard on `log` and in-memory ports, one call allowed per run. */
const memoryGuard = (log: MemoryLog) =>
  createGuard({
    log,
    ledger: new MemoryLedger(),
    schemaStore: new MemorySchemaStore(),
    secretKey: 'k',
    policy: { maxToolCalls: 1 },
  });

/** Whether `p` has settled after a while (false for good when it waits on a held copy). */
const settles = (p: Promise<unknown>) =>
  Promise.race([p.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 50))]);

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lg-copies-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The event types copied to `topic` so far, read as another process would. */
async function copied(topic: string): Promise<string[]> {
  const log = await EmbeddedLog.open(dir, { readOnly: true });
  try {
    const events = await EventStore.create(log, new SqliteSchemaStore(dir, { readOnly: true }));
    const out: string[] = [];
    for (const r of await log.read(topic, 0))
      out.push((await events.decode(topic as typeof TOPICS.ledger, r.value)).event.type);
    return out;
  } finally {
    await log.close();
  }
}

it('a stop is on the stops topic when the call that stopped returns', async () => {
  const guard = await createGuard({ dataDir: dir, secretKey: 'k', policy: { maxToolCalls: 1 } });
  const run = await guard.startRun({ runId: 'capped' });
  expect((await run.call({ tool: 'search', args: { q: 1 } }, () => 'ok')).status).toBe('executed');
  expect((await run.call({ tool: 'search', args: { q: 2 } }, () => 'ok')).status).toBe('stopped');
  expect(await copied(TOPICS.stops)).toEqual(['RunStopped']);
  await guard.close();
});

it("a side effect's claim and completion are on the ledger topic once the guard is closed", async () => {
  const guard = await createGuard({ dataDir: dir, secretKey: 'k' });
  const run = await guard.startRun({ runId: 'pays' });
  const pay = { tool: 'charge', args: { cents: 500 }, sideEffect: true, operationKey: 'order-1' };
  expect((await run.call(pay, () => ({ charged: 500 }))).status).toBe('executed');
  await guard.close();
  expect(await copied(TOPICS.ledger)).toEqual(['OperationClaimed', 'OperationCompleted']);
  expect(await copied(TOPICS.stops)).toEqual([]);
});

it('a side effect runs without waiting for its ledger copy; a stop waits for its stops copy', async () => {
  const ledgerHeld = new HeldCopies(TOPICS.ledger);
  const guard = await memoryGuard(ledgerHeld);
  const run = await guard.startRun({ runId: 'pays' });
  const pay = { tool: 'charge', args: { cents: 500 }, sideEffect: true, operationKey: 'order-1' };
  // Before, every call with a ledger copy waited for it (here: for ever; on disk: one more fsync
  // before the charge ran).
  expect((await run.call(pay, () => ({ charged: 500 }))).status).toBe('executed');
  expect(await ledgerHeld.endOffset(TOPICS.ledger)).toBe(0);
  ledgerHeld.open();
  await guard.close();
  expect(await ledgerHeld.endOffset(TOPICS.ledger)).toBe(2);

  const stopsHeld = new HeldCopies(TOPICS.stops);
  const second = await memoryGuard(stopsHeld);
  const capped = await second.startRun({ runId: 'capped' });
  await capped.call({ tool: 'search', args: { q: 1 } }, () => 'ok');
  const stopping = capped.call({ tool: 'search', args: { q: 2 } }, () => 'ok');
  expect(await settles(stopping)).toBe(false);
  stopsHeld.open();
  expect((await stopping).status).toBe('stopped');
  expect(await stopsHeld.endOffset(TOPICS.stops)).toBe(1);
  await second.close();
});
