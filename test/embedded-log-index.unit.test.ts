/**
 * The embedded topic's persisted index: a sound one spares the open any scan of the segments; a
 * deleted, corrupt or stale one is noticed, the segments are scanned, and every answer is the same.
 */
import {
  copyFile,
  mkdtemp,
  readdir,
  readFile,
  rm,
  stat,
  truncate,
  unlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { scanRecords } from '../src/log/embedded/segment-format.js';
import { INDEX_FILE } from '../src/log/embedded/topic-index.js';
import { TopicLog } from '../src/log/embedded/topic-log.js';

let dir: string;
let notes: string[];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lg-index-'));
  notes = [];
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const KEYS = ['run-a', 'run-b', 'run-c'];
const open = () => TopicLog.open('t', dir, { fsync: false, segmentBytes: 400, note: (l) => notes.push(l) });

async function write(from: number, n: number): Promise<void> {
  const t = await open();
  for (let i = from; i < from + n; i++)
    await t.write([{ key: KEYS[i % KEYS.length] as string, value: Buffer.from(`value-${i}`) }]);
  await t.close();
}

/** Everything a reader can ask: all records, each key's records and count. */
async function answers(t: TopicLog) {
  const all = (await t.read(0, 1_000_000)).map((r) => `${r.offset}:${r.key}:${r.value}`);
  const byKey = [];
  for (const k of KEYS) byKey.push([k, t.keyCount(k), (await t.readKey(k, 1)).map((r) => r.offset)]);
  return { end: t.end, all, byKey };
}

const segmentBytes = async () => {
  let n = 0;
  for (const f of await readdir(dir)) if (f.endsWith('.seg')) n += (await stat(join(dir, f))).size;
  return n;
};

async function scanned(): Promise<{ bytes: number; answers: Awaited<ReturnType<typeof answers>> }> {
  const t = await open();
  try {
    return { bytes: t.scannedBytes, answers: await answers(t) };
  } finally {
    await t.close();
  }
}

describe('embedded topic index', () => {
  it('a writer leaves an index at close; the next open reads no segment to build its own', async () => {
    await write(0, 60);
    expect((await readdir(dir)).filter((f) => f.endsWith('.seg')).length).toBeGreaterThan(3);
    const withIndex = await scanned();
    expect(withIndex.bytes).toBe(0);
    await unlink(join(dir, INDEX_FILE));
    const rebuilt = await scanned();
    expect(rebuilt.bytes).toBe(await segmentBytes());
    expect(rebuilt.answers).toEqual(withIndex.answers);
    expect(withIndex.answers.end).toBe(60);
    // A reader never writes the index; the next writer's close does.
    expect((await scanned()).bytes).toBe(await segmentBytes());
    await write(60, 1);
    expect((await scanned()).bytes).toBe(0);
  });

  it('an index from before the last appends is a prefix: only the bytes after it are scanned', async () => {
    await write(0, 30);
    await copyFile(join(dir, INDEX_FILE), join(dir, 'old-index'));
    const before = await segmentBytes();
    await write(30, 30);
    // What a writer that died before its close leaves: an index of the first 30 records only.
    await copyFile(join(dir, 'old-index'), join(dir, INDEX_FILE));
    const { bytes, answers: got } = await scanned();
    expect(bytes).toBe((await segmentBytes()) - before);
    await unlink(join(dir, INDEX_FILE));
    expect((await scanned()).answers).toEqual(got);
  });

  it('a corrupt index is noted and rebuilt from the segments, with the same answers', async () => {
    await write(0, 40);
    const sound = await scanned();
    const text = await readFile(join(dir, INDEX_FILE), 'utf8');
    await writeFile(join(dir, INDEX_FILE), text.replace('run-b', 'run-x'));
    const rebuilt = await scanned();
    expect(notes.join('\n')).toMatch(
      /index\.json: not used \(its CRC does not match\); indexing the segments/,
    );
    expect(rebuilt.bytes).toBe(await segmentBytes());
    expect(rebuilt.answers).toEqual(sound.answers);
  });

  it('a segment cut shorter than indexed makes the index stale: dropped, and the cut is what is read', async () => {
    await write(0, 40);
    const before = await scanned();
    const name = (await readdir(dir))
      .filter((f) => f.endsWith('.seg'))
      .sort()
      .at(-1) as string;
    const last = join(dir, name);
    // Cut the last record off, as repair cuts a damaged tail, and keep the index from before.
    const positions = scanRecords(await readFile(last), Number.parseInt(name, 10)).positions;
    expect(positions.length).toBeGreaterThan(1);
    await truncate(last, positions.at(-1) as number);
    const after = await scanned();
    expect(notes.join('\n')).toMatch(/shorter than the \d+ indexed/);
    expect(after.answers.end).toBe(39);
    expect(after.answers.all).toEqual(before.answers.all.slice(0, 39));
  });

  it('a segment rewritten to the same length makes the index stale too (its last record is checked)', async () => {
    await write(0, 40);
    const last = join(
      dir,
      (await readdir(dir))
        .filter((f) => f.endsWith('.seg'))
        .sort()
        .at(-1) as string,
    );
    const bytes = await readFile(last);
    bytes[bytes.length - 1] = (bytes.at(-1) ?? 0) ^ 0xff;
    await writeFile(last, bytes);
    const t = await open();
    await t.close();
    expect(notes.join('\n')).toMatch(/the last indexed record of .* is not what was indexed/);
  });
});
