import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileLedger } from '../src/runtime/file-ledger.js';
import { ledgerContract } from './runtime-ledger-contract.js';

ledgerContract('FileLedger', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'loopguard-ledger-'));
  return {
    a: FileLedger.open(dir),
    b: FileLedger.open(dir),
    close: async () => rmSync(dir, { recursive: true, force: true }),
  };
});
