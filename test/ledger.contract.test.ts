import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteLedger } from '../src/log/embedded/sqlite-ledger.js';
import { MemoryLedger } from '../src/log/memory-ledger.js';
import { ledgerContract } from './ledger-contract.js';

// One process's map: both workers share the one instance.
ledgerContract('MemoryLedger', async () => {
  const a = new MemoryLedger();
  return { a, b: a, close: () => a.close() };
});

// Two ledgers, two connections to one database: as two processes on one data dir have.
ledgerContract('SqliteLedger', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'loopguard-ledger-'));
  const a = SqliteLedger.open(dir);
  const b = SqliteLedger.open(dir);
  return {
    a,
    b,
    close: async () => {
      await a.close();
      await b.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
