/** `loopguard repair`: a damaged data dir is cut at its last good record, the cut bytes kept aside. */
import { mkdtemp, open as openFile, readdir, rm, stat, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { EmbeddedLog } from '../src/log/embedded/embedded-log.js';
import { captureIo } from './support/capture-io.js';

const TOPIC = 'repair.test';
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lg-repair-'));
  const log = await EmbeddedLog.open(dir, { segmentBytes: 60, note: () => undefined });
  for (let i = 0; i < 12; i++) await log.append(TOPIC, [{ key: 'k', value: Buffer.from(`value-${i}`) }]);
  await log.close();
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const tdir = () => join(dir, 'topics', TOPIC);
const segments = async () => (await readdir(tdir())).filter((n) => n.endsWith('.seg')).sort();
const bytesIn = async (d: string) => {
  let n = 0;
  for (const f of await readdir(d)) if (f !== 'writer.lock') n += (await stat(join(d, f))).size;
  return n;
};

async function repair() {
  const io = captureIo();
  const code = await main(['repair', '--data-dir', dir], io);
  return { code, out: io.stdout() };
}

async function readable(): Promise<string[]> {
  const log = await EmbeddedLog.open(dir, { readOnly: true, note: () => undefined });
  try {
    return (await log.read(TOPIC, 0)).map((r) => r.value.toString());
  } finally {
    await log.close();
  }
}

describe('loopguard repair', () => {
  it('cuts at a corrupt record in the middle, moving it and everything after it aside', async () => {
    const segs = await segments();
    const victim = join(tdir(), segs[1] as string);
    const fh = await openFile(victim, 'r+');
    await fh.write(Buffer.from('XX'), 0, 2, 12);
    await fh.close();
    const total = await bytesIn(tdir());
    await expect(readable()).rejects.toMatchObject({ code: 'log_corrupt' });

    const { code, out } = await repair();
    expect(code).toBe(0);
    expect(out).toMatch(new RegExp(`${TOPIC}: \\d+ records`));
    expect(out).toMatch(/cut at byte 0 \(CRC mismatch\)/);
    const kept = await readable();
    expect(kept.length).toBeGreaterThan(0);
    expect(kept).toEqual(Array.from({ length: kept.length }, (_, i) => `value-${i}`));
    // Nothing is lost: the log and the side files together hold every byte there was.
    expect((await bytesIn(tdir())) + (await bytesIn(join(dir, 'damaged', TOPIC)))).toBe(total);
    expect((await repair()).out).toMatch(/sound/);
  });

  it('cuts at a missing segment and appends continue after the last good record', async () => {
    const segs = await segments();
    await unlink(join(tdir(), segs[2] as string));
    await expect(readable()).rejects.toMatchObject({ code: 'log_corrupt' });
    const { out } = await repair();
    expect(out).toMatch(/records from offset \d+ on are missing/);
    const kept = await readable();
    const log = await EmbeddedLog.open(dir, { note: () => undefined });
    expect(await log.append(TOPIC, [{ key: 'k', value: Buffer.from('after') }])).toEqual([kept.length]);
    await log.close();
    expect(await readable()).toEqual([...kept, 'after']);
  });
});
