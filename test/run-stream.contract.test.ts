/** The RunStream contract on the local adapters: memory, and the embedded log (two layouts). */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemorySchemaStore } from '../src/events/memory-schema-store.js';
import { EmbeddedLog, type EmbeddedLogOptions } from '../src/log/embedded/embedded-log.js';
import { EventStore } from '../src/log/event-store.js';
import { MemoryLog } from '../src/log/memory-log.js';
import { runStreamContract } from './run-stream-contract.js';

runStreamContract('memory', async () => {
  const log = new MemoryLog();
  const events = await EventStore.create(log, new MemorySchemaStore());
  return {
    stream: log.runStream(events),
    events,
    second: () => log.runStream(events),
    runId: (base) => base,
    copied: async () => {},
    cleanup: () => log.close(),
  };
});

for (const opts of [{}, { fsync: 'none', groupCommitMs: 2 }] as EmbeddedLogOptions[]) {
  runStreamContract(`embedded ${JSON.stringify(opts)}`, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lg-stream-'));
    const log = await EmbeddedLog.open(dir, opts);
    const events = await EventStore.create(log, new MemorySchemaStore());
    return {
      stream: log.runStream(events),
      events,
      second: () => log.runStream(events),
      runId: (base) => base,
      copied: async () => {},
      cleanup: async () => {
        await log.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  });
}
