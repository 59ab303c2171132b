import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RecordedEvent } from '../src/domain/events.js';
import { MemorySchemaStore } from '../src/events/memory-schema-store.js';
import { EmbeddedLog } from '../src/log/embedded/embedded-log.js';
import { SqliteSchemaStore } from '../src/log/embedded/sqlite-schema-store.js';
import { TOPICS } from '../src/log/event-log.js';
import { EventStore } from '../src/log/event-store.js';
import { MemoryLog } from '../src/log/memory-log.js';
import { SAMPLE_RECORDS } from './log-sample-events.js';

async function collect(it: AsyncIterable<RecordedEvent>): Promise<RecordedEvent[]> {
  const out: RecordedEvent[] = [];
  for await (const e of it) out.push(e);
  return out;
}

describe('EventStore', () => {
  it('writes every event to runs, stops to stops and operations to the ledger, keyed for order', async () => {
    const log = new MemoryLog();
    const store = await EventStore.create(log, new MemorySchemaStore());
    await store.append(SAMPLE_RECORDS);
    expect(await collect(store.readRuns())).toEqual(SAMPLE_RECORDS);
    expect((await collect(store.readStops())).map((e) => e.event.type)).toEqual(['RunStopped']);
    expect((await collect(store.readLedger())).map((e) => e.event.type)).toEqual([
      'OperationClaimed',
      'OperationCompleted',
      'OperationInDoubt',
      'OperationReleased',
    ]);
    expect((await log.read(TOPICS.runs, 0)).every((r) => r.key === 'run-1')).toBe(true);
    expect((await log.read(TOPICS.ledger, 0)).map((r) => r.key)).toEqual(['op-1', 'op-1', 'op-2', 'op-3']);
    expect((await log.read(TOPICS.stops, 0))[0]?.headers).toEqual({ 'loopguard.type': 'RunStopped' });
    expect(await collect(store.readRuns(12))).toEqual(SAMPLE_RECORDS.slice(12));
  });

  it('follows stops as they are appended', async () => {
    const store = await EventStore.create(new MemoryLog(), new MemorySchemaStore());
    const seen: Array<[string, number]> = [];
    const ac = new AbortController();
    const done = store.followStops(0, (e, offset) => void seen.push([e.eventId, offset]), ac.signal);
    await store.append(SAMPLE_RECORDS.slice(0, 8));
    await store.append(SAMPLE_RECORDS.slice(7, 8).map((r) => ({ ...r, eventId: 'again' })));
    while (seen.length < 2) await new Promise((r) => setTimeout(r, 5));
    ac.abort();
    await done;
    expect(seen).toEqual([
      ['evt-8', 0],
      ['again', 1],
    ]);
  });

  it('reads back what an earlier process wrote to an embedded log with a file schema store', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lg-store-'));
    try {
      const first = await EmbeddedLog.open(dir);
      await (await EventStore.create(first, new SqliteSchemaStore(dir))).append(SAMPLE_RECORDS);
      await first.close();
      const second = await EmbeddedLog.open(dir);
      const store = await EventStore.create(second, new SqliteSchemaStore(dir));
      expect(await collect(store.readRuns())).toEqual(SAMPLE_RECORDS);
      await second.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
