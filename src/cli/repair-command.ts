import { repairDataDir } from '../log/embedded/repair.js';
import type { Io } from './io.js';

/**
 * `loopguard repair [--data-dir D]`: SQLite's integrity check on the data dir's database; a
 * damaged file is kept aside whole and replaced by every row that could be read. Prints which.
 */
export async function repairCommand(dataDir: string, io: Io): Promise<number> {
  const r = await repairDataDir(dataDir);
  const counts = Object.entries(r.rows)
    .map(([t, n]) => `${t} ${n}`)
    .join(', ');
  if (r.keptIn === null) {
    io.out(`${dataDir}: sound (integrity_check ok); ${counts}\n`);
    return 0;
  }
  io.out(`${dataDir}: damaged (${r.problems.length} problems from integrity_check):\n`);
  for (const p of r.problems.slice(0, 20)) io.out(`  ${p}\n`);
  io.out(`the damaged file is kept in ${r.keptIn}\n`);
  const skipped = Object.entries(r.unreadable).filter(([, n]) => n > 0);
  io.out(
    `rebuilt from every readable row: ${counts}${skipped.length === 0 ? '' : `; unreadable spots skipped: ${skipped.map(([t, n]) => `${t} ${n}`).join(', ')}`}\n`,
  );
  return 0;
}
