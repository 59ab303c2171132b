import { migrateDataDir } from '../log/embedded/migrate.js';
import type { Io } from './io.js';

/** `loopguard migrate --data-dir D`: the segment log of D converted into D's SQLite store, once. */
export async function migrateCommand(dataDir: string, io: Io): Promise<number> {
  const m = migrateDataDir(dataDir);
  const topics = Object.entries(m.records)
    .map(([t, n]) => `${t} ${n}`)
    .join(', ');
  io.out(
    `${dataDir}: migrated to the SQLite store: records ${topics || 'none'}; schemas ${m.schemas}; ledger entries ${m.ledger}; reissues ${m.reissues}\n`,
  );
  for (const n of m.notes) io.out(`  ${n}\n`);
  io.out(`the segment log's files are kept in ${m.keptIn}\n`);
  return 0;
}
