/**
 * `loopguard repair`: cuts each topic of a data dir at its last good record. Everything after
 * the first damage (a corrupt or torn record, a missing segment) is moved out of the log into
 * `<data dir>/damaged/<topic>/`, never deleted: the log becomes readable again, and the bytes
 * stay for whoever wants to look at them. Takes each topic's writer lock, so it never races a
 * writer.
 */
import { mkdir, readdir, readFile, rename, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { LoopguardError } from '../../domain/errors.js';
import { scanRecords } from './segment-format.js';
import { keepDamaged } from './segment-io.js';
import { WriterLock } from './writer-lock.js';

export interface TopicRepair {
  readonly topic: string;
  /** Records the topic holds after the repair. */
  readonly records: number;
  /** What was cut, one line per file, with where its bytes went; empty when the topic was sound. */
  readonly cut: readonly string[];
}

export async function repairDataDir(dir: string): Promise<TopicRepair[]> {
  const topics = await readdir(join(dir, 'topics')).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT')
      throw new LoopguardError('no_data_dir', `${dir} holds no log (no topics directory)`);
    throw e;
  });
  const out: TopicRepair[] = [];
  for (const topic of topics.sort()) out.push(await repairTopic(dir, topic));
  return out;
}

async function repairTopic(dir: string, topic: string): Promise<TopicRepair> {
  const tdir = join(dir, 'topics', topic);
  const lock = await WriterLock.acquire(join(tdir, 'writer.lock'));
  try {
    const names = (await readdir(tdir)).filter((n) => n.endsWith('.seg')).sort();
    const cut: string[] = [];
    let next = 0;
    let damaged = false;
    for (const name of names) {
      const path = join(tdir, name);
      if (damaged || Number.parseInt(name, 10) !== next) {
        damaged = true;
        cut.push(
          `${path}: after the damage (records from offset ${next} on are missing); moved to ${await moveAside(dir, topic, path)}`,
        );
        continue;
      }
      const buf = await readFile(path);
      const scan = scanRecords(buf, next);
      next += scan.positions.length;
      if (scan.tail === 'clean') continue;
      damaged = true;
      const side = await keepDamaged(path, scan.validEnd, buf.length);
      await truncate(path, scan.validEnd);
      cut.push(
        `${path}: cut at byte ${scan.validEnd} (${scan.reason ?? scan.tail}), after offset ${next - 1}; ${buf.length - scan.validEnd} bytes kept in ${side}`,
      );
    }
    return { topic, records: next, cut };
  } finally {
    await lock.release();
  }
}

async function moveAside(dir: string, topic: string, path: string): Promise<string> {
  const sideDir = join(dir, 'damaged', topic);
  await mkdir(sideDir, { recursive: true });
  const to = join(sideDir, `${path.split('/').at(-1)}.whole`);
  await rename(path, to);
  return to;
}
