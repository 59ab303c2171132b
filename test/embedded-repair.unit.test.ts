/**
 * `loopguard repair` on the SQLite store: SQLite's integrity check decides; a damaged file is kept
 * aside whole and replaced by every row that can still be read.
 */
import { existsSync, openSync, readFileSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
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
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function write(n: number): Promise<void> {
  const log = await EmbeddedLog.open(dir);
  for (let i = 0; i < n; i += 50)
    await log.append(
      TOPIC,
      Array.from({ length: 50 }, (_, j) => ({ key: `k${i + j}`, value: Buffer.alloc(300, i + j) })),
    );
  // The last connection's close checkpoints the WAL into the database file.
  await log.close();
}

describe('loopguard repair', () => {
  it('leaves a sound database alone and says so', async () => {
    await write(100);
    const before = readFileSync(join(dir, 'loopguard.db'));
    const io = captureIo();
    expect(await main(['repair', '--data-dir', dir], io)).toBe(0);
    expect(io.stdout()).toMatch(/sound \(integrity_check ok\); .*records 100/);
    expect(readFileSync(join(dir, 'loopguard.db')).equals(before)).toBe(true);
    expect(existsSync(join(dir, 'damaged'))).toBe(false);
  });

  it('keeps a damaged file aside and rebuilds the store from every row it can read', async () => {
    await write(2000);
    const path = join(dir, 'loopguard.db');
    const pages = statSync(path).size / 4096;
    const original = readFileSync(path);
    // Garbage over a page in the middle of the records table: what a bad sector leaves.
    const fd = openSync(path, 'r+');
    writeSync(fd, Buffer.alloc(4096, 0x5a), 0, 4096, Math.floor(pages / 2) * 4096);
    const damaged = readFileSync(path);
    const io = captureIo();
    expect(await main(['repair', '--data-dir', dir], io)).toBe(0);
    const kept = /kept in (\S+)/.exec(io.stdout())?.[1] as string;
    expect(io.stdout()).toMatch(/damaged \(\d+ problems from integrity_check\)/);
    expect(readFileSync(kept).equals(damaged)).toBe(true);
    expect(readFileSync(kept).equals(original)).toBe(false);
    const log = await EmbeddedLog.open(dir, { readOnly: true });
    const rows = await log.read(TOPIC, 0);
    // A leaf page holds about a dozen 300-byte records, an interior one points at a few hundred:
    // what hung below the garbage is gone, the rest came through intact.
    expect(rows.length).toBeGreaterThan(1000);
    expect(rows.length).toBeLessThan(2000);
    for (const r of rows) expect(r.value.equals(Buffer.alloc(300, Number(r.key.slice(1))))).toBe(true);
    await log.close();
    const again = captureIo();
    expect(await main(['repair', '--data-dir', dir], again)).toBe(0);
    expect(again.stdout()).toMatch(/sound/);
  });

  it('replaces a file that is no database at all by an empty store, keeping it aside', async () => {
    const path = join(dir, 'loopguard.db');
    writeFileSync(path, 'not a db');
    const io = captureIo();
    // Before 2026-12-03: internal error, loopguard.db.repair left beside it, nothing replaced.
    expect(await main(['repair', '--data-dir', dir], io)).toBe(0);
    const kept = /kept in (\S+)/.exec(io.stdout())?.[1] as string;
    expect(readFileSync(kept, 'utf8')).toBe('not a db');
    expect(existsSync(`${path}.repair`)).toBe(false);
    const log = await EmbeddedLog.open(dir, { readOnly: true });
    expect(await log.read(TOPIC, 0)).toEqual([]);
    await log.close();
  });

  it('refuses a data dir without a database', async () => {
    await expect(main(['repair', '--data-dir', dir], captureIo())).rejects.toMatchObject({
      code: 'no_data_dir',
    });
  });
});
