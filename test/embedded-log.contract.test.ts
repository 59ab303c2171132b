import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedLog } from '../src/log/embedded/embedded-log.js';
import { eventLogContract } from './log-contract.js';

eventLogContract('embedded (fsync per batch)', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'lg-contract-'));
  const log = await EmbeddedLog.open(dir);
  return {
    log,
    topic: (base) => `test.${base}`,
    cleanup: async () => {
      await log.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});

// Tiny segments and a commit delay exercise segment rolls and multi-append batches in every test.
eventLogContract('embedded (small segments, groupCommitMs 2)', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'lg-contract-'));
  const log = await EmbeddedLog.open(dir, { fsync: 'none', groupCommitMs: 2 });
  return {
    log,
    topic: (base) => `test.${base}`,
    cleanup: async () => {
      await log.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});
