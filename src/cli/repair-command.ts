import { repairDataDir } from '../log/embedded/repair.js';
import type { Io } from './io.js';

/** `loopguard repair [--data-dir D]`: cuts every topic at its last good record; prints what moved where. */
export async function repairCommand(dataDir: string, io: Io): Promise<number> {
  const topics = await repairDataDir(dataDir);
  for (const t of topics) {
    io.out(`${t.topic}: ${t.records} records${t.cut.length === 0 ? ', sound' : ''}\n`);
    for (const line of t.cut) io.out(`  ${line}\n`);
  }
  return 0;
}
