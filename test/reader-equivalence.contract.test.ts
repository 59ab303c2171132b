/**
 * The reader-equivalence contract on the local adapters (memory, embedded SQLite): their store
 * refuses a losing writer's batch and a zombie append with `conflict`, so the rebuild and the
 * stream agree because nothing of either was written.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { openEmbeddedStore } from '../src/cli/open-store.js';
import { MemorySchemaStore } from '../src/events/memory-schema-store.js';
import { EventStore } from '../src/log/event-store.js';
import { MemoryLog } from '../src/log/memory-log.js';
import { Projections } from '../src/projections/index.js';
import { type ReaderFixture, readerEquivalenceContract } from './reader-equivalence-contract.js';

readerEquivalenceContract('memory', async () => {
  const log = new MemoryLog();
  const events = await EventStore.create(log, new MemorySchemaStore());
  const scan = async (apply: Parameters<ReaderFixture['scan']>[0]) => {
    for await (const e of events.readRuns(0)) apply(e);
  };
  return {
    stream: () => log.runStream(events),
    appendLost: (runId, after, es) =>
      expect(
        log.runStream(events).appendToStream(runId, es, { expectedStreamVersion: after }),
      ).rejects.toMatchObject({ code: 'conflict' }),
    rebuild: async () => {
      const p = new Projections();
      await scan((e) => p.apply(e));
      return p;
    },
    scan,
    runId: (base) => base,
    cleanup: () => log.close(),
  };
});

readerEquivalenceContract('embedded', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'lg-readers-'));
  // The CLI's own store: the rebuild and scan that rebuild, audit, whatif and ui call.
  const store = await openEmbeddedStore(dir);
  return {
    stream: () => store.stream,
    appendLost: (runId, after, es) =>
      expect(store.stream.appendToStream(runId, es, { expectedStreamVersion: after })).rejects.toMatchObject({
        code: 'conflict',
      }),
    rebuild: () => store.rebuild(),
    scan: (apply) => store.scan(apply),
    runId: (base) => base,
    cleanup: async () => {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});
