import { MemoryLog } from '../src/log/memory-log.js';
import { eventLogContract } from './log-contract.js';

eventLogContract('memory', async () => {
  const log = new MemoryLog();
  return { log, topic: (base) => `test.${base}`, cleanup: () => log.close() };
});
