/**
 * The persisted index of one embedded topic: where each complete record sits in its segment and
 * the offsets of every key, as of the last writer's close. Opening a topic with a sound index reads
 * no segment but the tail record of each indexed one (to check it) and whatever was appended
 * after the index was written; without one, or with one that does not match the segments, the
 * topic is indexed by scanning them, as before.
 *
 * Sound means: the file's CRC matches its body, every indexed segment still exists and is at least
 * as long as indexed, and the last indexed record of each is still there, byte for byte (its CRC
 * field equals the one indexed, and its body still hashes to it). A segment cut shorter (a repair)
 * or rewritten fails the check, and the index is dropped.
 *
 * File: `index.json` in the topic directory, written to a temporary file, flushed and renamed, so
 * a crash leaves the old index or the new one, never half of one.
 */
import { open, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { RECORD_HEADER } from './segment-format.js';
import { syncDir } from './segment-io.js';

export const INDEX_FILE = 'index.json';
const VERSION = 1;

export interface IndexedSegment {
  readonly base: number;
  readonly path: string;
  readonly positions: readonly number[];
  readonly size: number;
}

export interface TopicIndex {
  readonly segments: readonly IndexedSegment[];
  /** Offsets of each key, in offset order. */
  readonly keys: ReadonlyMap<string, readonly number[]>;
}

interface IndexFile {
  readonly version: number;
  readonly segments: readonly { base: number; size: number; positions: number[]; tailCrc: number | null }[];
  readonly keys: readonly [string, number[]][];
}

/** Writes the index atomically; `durable` also flushes it and its directory entry. */
export async function saveTopicIndex(dir: string, index: TopicIndex, durable: boolean): Promise<void> {
  const segments = [];
  for (const s of index.segments)
    segments.push({ base: s.base, size: s.size, positions: [...s.positions], tailCrc: await tailCrc(s) });
  const file: IndexFile = { version: VERSION, segments, keys: [...index.keys].map(([k, o]) => [k, [...o]]) };
  const body = JSON.stringify(file);
  const tmp = join(dir, `${INDEX_FILE}.tmp`);
  await writeFile(tmp, `${crc32(body)}\n${body}`, { flush: durable });
  await rename(tmp, join(dir, INDEX_FILE));
  if (durable) await syncDir(dir);
}

/**
 * The index if it is sound for the segments on disk (`sizes`: file size by segment path), else
 * null with why, for a note. A missing index is null without a reason.
 */
export async function loadTopicIndex(
  dir: string,
  segmentPath: (base: number) => string,
  sizes: ReadonlyMap<string, number>,
): Promise<{ index: TopicIndex | null; why?: string }> {
  let text: string;
  try {
    text = await readFile(join(dir, INDEX_FILE), 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { index: null };
    throw e;
  }
  const nl = text.indexOf('\n');
  const body = text.slice(nl + 1);
  if (nl < 0 || Number(text.slice(0, nl)) !== crc32(body))
    return { index: null, why: 'its CRC does not match' };
  let file: IndexFile;
  try {
    file = JSON.parse(body) as IndexFile;
  } catch {
    return { index: null, why: 'it is not JSON' };
  }
  if (file.version !== VERSION) return { index: null, why: `version ${file.version}, expected ${VERSION}` };
  const segments: IndexedSegment[] = [];
  for (const s of file.segments) {
    const path = segmentPath(s.base);
    const size = sizes.get(path);
    if (size === undefined) return { index: null, why: `${path} is gone` };
    if (size < s.size)
      return { index: null, why: `${path} is ${size} bytes, shorter than the ${s.size} indexed` };
    const seg = { base: s.base, path, positions: s.positions, size: s.size };
    if ((await tailCrc(seg)) !== s.tailCrc)
      return { index: null, why: `the last indexed record of ${path} is not what was indexed` };
    segments.push(seg);
  }
  return { index: { segments, keys: new Map(file.keys) } };
}

/** Drops a topic's index (a repair that cuts segments makes it stale). */
export async function dropTopicIndex(dir: string): Promise<void> {
  await rm(join(dir, INDEX_FILE), { force: true });
}

/** The CRC field of the segment's last indexed record if it is intact (-1 if not; null: no record). */
async function tailCrc(seg: IndexedSegment): Promise<number | null> {
  const last = seg.positions.at(-1);
  if (last === undefined) return null;
  const buf = Buffer.alloc(seg.size - last);
  const fh = await open(seg.path, 'r');
  try {
    const { bytesRead } = await fh.read(buf, 0, buf.length, last);
    if (bytesRead !== buf.length || buf.length < RECORD_HEADER) return -1;
  } finally {
    await fh.close();
  }
  if (buf.readUInt32BE(0) !== buf.length - RECORD_HEADER) return -1;
  const stored = buf.readUInt32BE(4);
  return crc32(buf.subarray(RECORD_HEADER)) === stored ? stored : -1;
}
