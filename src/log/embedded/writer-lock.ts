/**
 * One writer per topic: a lock file created with O_EXCL holding the writer's pid. A lock whose pid
 * is dead (a crashed writer) is taken over. Two processes taking over the same stale lock at the
 * same instant could both win; the embedded mode documents one writing process per data dir.
 */
import { open, readFile, unlink } from 'node:fs/promises';
import { LoopguardError } from '../../domain/errors.js';

const isCode = (e: unknown, code: string): boolean => (e as NodeJS.ErrnoException)?.code === code;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return isCode(e, 'EPERM');
  }
}

export class WriterLock {
  private constructor(private readonly path: string) {}

  static async acquire(path: string): Promise<WriterLock> {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        const fh = await open(path, 'wx');
        await fh.writeFile(String(process.pid));
        await fh.close();
        return new WriterLock(path);
      } catch (e) {
        if (!isCode(e, 'EEXIST')) throw e;
      }
      const pid = Number.parseInt(await readFile(path, 'utf8').catch(() => ''), 10);
      // An empty file is a lock being written right now; a live pid is a real writer.
      if (Number.isNaN(pid) || alive(pid)) {
        throw new LoopguardError(
          'log_locked',
          `${path} is held by process ${Number.isNaN(pid) ? '?' : pid}`,
          {
            retriable: true,
            details: { path, pid },
          },
        );
      }
      await unlink(path).catch((e: unknown) => {
        if (!isCode(e, 'ENOENT')) throw e;
      });
    }
    throw new LoopguardError('log_locked', `could not take over stale lock ${path}`, { retriable: true });
  }

  /** The pid of a live process holding the lock at `path`, or null. */
  static async liveHolder(path: string): Promise<number | null> {
    const pid = Number.parseInt(await readFile(path, 'utf8').catch(() => ''), 10);
    return !Number.isNaN(pid) && alive(pid) ? pid : null;
  }

  async release(): Promise<void> {
    await unlink(this.path).catch(() => undefined);
  }
}
