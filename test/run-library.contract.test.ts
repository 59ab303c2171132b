/**
 * The Run contract against the library's GuardedRun: on the embedded log (files in a data dir of
 * its own) and on the in-memory log (with the SQLite ledger, the library's only one, in a temp dir).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemorySchemaStore } from '../src/events/memory-schema-store.js';
import { MemoryLog } from '../src/log/memory-log.js';
import { createGuard, type Guard, SqliteLedger } from '../src/runtime/index.js';
import { describeRunContract, type RunHarness } from './run-contract.js';

function harness(guard: Guard, dir: string): RunHarness {
  return {
    startRun: (runId) => guard.startRun({ runId }),
    resume: (runId, change) => guard.resume(runId, change),
    close: async () => {
      await guard.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

describeRunContract('library, embedded log', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'loopguard-run-contract-'));
  return harness(await createGuard({ dataDir: dir }), dir);
});

describeRunContract('library, in-memory log', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'loopguard-run-contract-'));
  const guard = await createGuard({
    log: new MemoryLog(),
    schemaStore: new MemorySchemaStore(),
    ledger: SqliteLedger.open(dir),
    secretKey: 'run-contract-secret-key-0123456789abcdef',
  });
  return harness(guard, dir);
});
