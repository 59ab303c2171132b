/**
 * File I/O of the embedded log's segments, in one place so that the rules hold everywhere: a
 * write is acknowledged only when every byte of it was written (a short write is continued, one
 * that makes no progress is an error), a full disk is a clear `disk_full`, and bytes cut from a
 * damaged segment are kept in a side file, never thrown away.
 */
import { type FileHandle, mkdir, open, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { LoopguardError, toLoopguardError } from '../../domain/errors.js';

/** The one write primitive; tests inject short writes and ENOSPC through it. */
export interface SegmentIo {
  /** Writes up to `length` bytes of `data` from `offset` at file `position`; the count written. */
  write(fh: FileHandle, data: Buffer, offset: number, length: number, position: number): Promise<number>;
}

export const nodeSegmentIo: SegmentIo = {
  write: async (fh, data, offset, length, position) =>
    (await fh.write(data, offset, length, position)).bytesWritten,
};

/** Writes all of `data` at `position`, or throws: never returns with part of it written. */
export async function writeFully(
  io: SegmentIo,
  fh: FileHandle,
  data: Buffer,
  position: number,
  path: string,
): Promise<void> {
  let done = 0;
  while (done < data.length) {
    let n: number;
    try {
      n = await io.write(fh, data, done, data.length - done, position + done);
    } catch (e) {
      throw ioError(e, path, position + done);
    }
    if (!(n > 0))
      throw new LoopguardError(
        'disk_full',
        `${path}: a write at byte ${position + done} stopped with ${data.length - done} bytes unwritten; the disk is probably full`,
        { retriable: true, details: { path, position: position + done } },
      );
    done += n;
  }
}

export function ioError(e: unknown, path: string, position: number): LoopguardError {
  const code = (e as NodeJS.ErrnoException)?.code;
  if (code === 'ENOSPC' || code === 'EDQUOT')
    return new LoopguardError(
      'disk_full',
      `${path}: no space left on the device writing at byte ${position}; the batch was not acknowledged`,
      { retriable: true, cause: e, details: { path, position } },
    );
  return toLoopguardError(e, 'log_io', true);
}

/**
 * Copies bytes [from, to) of a segment to `<data dir>/damaged/<topic>/<segment>.<from>.bin` before
 * they are cut; the path of the side file.
 */
export async function keepDamaged(segmentPath: string, from: number, to: number): Promise<string> {
  const topicDir = dirname(segmentPath);
  const dataDir = dirname(dirname(topicDir));
  const dir = join(dataDir, 'damaged', basename(topicDir));
  await mkdir(dir, { recursive: true });
  const side = join(dir, `${basename(segmentPath)}.${from}.bin`);
  const buf = Buffer.alloc(Math.max(0, to - from));
  const fh = await open(segmentPath, 'r');
  try {
    const { bytesRead } = await fh.read(buf, 0, buf.length, from);
    await writeFile(side, buf.subarray(0, bytesRead), { flush: true });
  } finally {
    await fh.close();
  }
  return side;
}

export async function syncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}
