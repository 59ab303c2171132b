/**
 * What the embedded store acknowledges is on disk and stays readable: a full disk, an oversized
 * record, a killed writer, a read-only opening, a segment-log data dir that must be migrated,
 * and a second process reading and following what a writer appends.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EmbeddedLog } from '../src/log/embedded/embedded-log.js';
import { SqliteLedger } from '../src/log/embedded/sqlite-ledger.js';
import { killWriterAfter } from './support/kill-writer.js';

const TOPIC = 'store.test';
const rec = (v: string, bytes = 0) => ({ key: 'k', value: Buffer.from(v.padEnd(bytes, '.')) });
const values = async (log: EmbeddedLog) =>
  (await log.read(TOPIC, 0)).map((r) => r.value.toString().replace(/\.+$/, ''));

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lg-store-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/**
 * A small tmpfs when this process may mount one (root), so the disk really fills; else the same
 * data dir with a page cap (PRAGMA max_page_count), where SQLite answers SQLITE_FULL just the same.
 */
function smallDisk(): { dataDir: string; cap: { maxPages?: number }; release: () => void } {
  const mnt = join(dir, 'disk');
  mkdirSync(mnt);
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', mnt], { stdio: 'ignore' });
    return { dataDir: join(mnt, 'data'), cap: {}, release: () => execFileSync('umount', [mnt]) };
  } catch {
    return { dataDir: join(mnt, 'data'), cap: { maxPages: 40 }, release: () => undefined };
  }
}

describe('embedded store durability', () => {
  it('a full disk is disk_full, nothing of the batch is acknowledged, what was acknowledged stays readable', async () => {
    const disk = smallDisk();
    try {
      const log = await EmbeddedLog.open(disk.dataDir, disk.cap);
      const acked: string[] = [];
      let error: unknown;
      for (let i = 0; i < 2000 && error === undefined; i++) {
        try {
          await log.append(TOPIC, [rec(`v${i}`, 2000)]);
          acked.push(`v${i}`);
        } catch (e) {
          error = e;
        }
      }
      expect(error).toMatchObject({
        code: 'disk_full',
        retriable: true,
        message: expect.stringMatching(/disk is full.*not acknowledged/),
      });
      expect(acked.length).toBeGreaterThan(3);
      expect(await values(log)).toEqual(acked);
      await log.close();
      const reopened = await EmbeddedLog.open(disk.dataDir, { readOnly: true });
      expect(await values(reopened)).toEqual(acked);
      await reopened.close();
    } finally {
      disk.release();
    }
  });

  it('refuses a record over the size limit before writing anything, naming it', async () => {
    const log = await EmbeddedLog.open(dir, { maxRecordBytes: 1000 });
    await log.append(TOPIC, [rec('small')]);
    await expect(
      log.append(TOPIC, [rec('fine'), { key: 'big-one', value: Buffer.alloc(2000, 1) }]),
    ).rejects.toMatchObject({
      code: 'record_too_large',
      message: expect.stringMatching(
        /record 1 of the append \(key "big-one"\) takes \d+ bytes, over the limit of 1000/,
      ),
    });
    expect(await log.append(TOPIC, [rec('after')])).toEqual([1]);
    await log.close();
    const reopened = await EmbeddedLog.open(dir);
    expect(await values(reopened)).toEqual(['small', 'after']);
    await reopened.close();
  });

  it('keeps every append a SIGKILLed writer acknowledged; appends continue after them', async () => {
    const { signal, out, err } = await killWriterAfter('test/log-crash-writer.ts', [dir, TOPIC], {
      lines: 2000,
      withinMs: 15_000,
    });
    expect(signal, err).toBe('SIGKILL');
    // Only complete lines count: the kill may cut the last one.
    const acks = out
      .split('\n')
      .slice(0, -1)
      .map((line) => line.split(' '))
      .map(([, offset, value]) => ({ offset: Number(offset), value: value as string }));
    expect(acks.length).toBeGreaterThan(100);
    const log = await EmbeddedLog.open(dir);
    const records = await log.read(TOPIC, 0);
    expect(records.map((r) => r.offset)).toEqual(records.map((_, i) => i));
    for (const a of acks) expect(records[a.offset]?.value.toString().replace(/\.+$/, '')).toBe(a.value);
    expect(await log.append(TOPIC, [rec('after-crash')])).toEqual([records.length]);
    await log.close();
  }, 30_000);
});

describe('embedded store openings', () => {
  it('reading never creates a data dir or a database, and refuses to write', async () => {
    const missing = join(dir, 'typo');
    await expect(EmbeddedLog.open(missing, { readOnly: true })).rejects.toMatchObject({
      code: 'no_data_dir',
    });
    expect(existsSync(missing)).toBe(false);
    mkdirSync(missing);
    await expect(EmbeddedLog.open(missing, { readOnly: true })).rejects.toMatchObject({
      code: 'no_data_dir',
      message: expect.stringContaining('nothing was recorded there yet'),
    });
    expect(readdirSync(missing)).toEqual([]);
    const writer = await EmbeddedLog.open(dir);
    await writer.append(TOPIC, [rec('a')]);
    await writer.close();
    const reader = await EmbeddedLog.open(dir, { readOnly: true });
    await expect(reader.append(TOPIC, [rec('b')])).rejects.toMatchObject({ code: 'read_only' });
    expect(await values(reader)).toEqual(['a']);
    await reader.close();
  });

  it('refuses a data dir the segment log wrote, saying how to migrate it', async () => {
    mkdirSync(join(dir, 'topics', 'loopguard.runs'), { recursive: true });
    for (const open of [() => EmbeddedLog.open(dir), () => EmbeddedLog.open(dir, { readOnly: true })])
      await expect(open()).rejects.toMatchObject({
        code: 'needs_migration',
        message: expect.stringContaining(`loopguard migrate --data-dir ${dir}`),
      });
    expect(() => SqliteLedger.open(dir)).toThrow(/loopguard migrate/);
    expect(existsSync(join(dir, 'loopguard.db'))).toBe(false);
  });

  it('refuses a database written by a newer loopguard', async () => {
    (await EmbeddedLog.open(dir)).close();
    const { DatabaseSync } = await import('node:sqlite');
    const db = new DatabaseSync(join(dir, 'loopguard.db'));
    db.exec('PRAGMA user_version = 99');
    db.close();
    await expect(EmbeddedLog.open(dir)).rejects.toMatchObject({ code: 'store_too_new' });
  });

  it('a file that is not a database is log_corrupt, naming it', async () => {
    writeFileSync(join(dir, 'loopguard.db'), Buffer.alloc(8192, 7));
    await expect(EmbeddedLog.open(dir)).rejects.toMatchObject({
      code: 'log_corrupt',
      message: expect.stringContaining(join(dir, 'loopguard.db')),
    });
  });

  it('lets a second instance read and follow what another appends after it opened', async () => {
    const writer = await EmbeddedLog.open(dir);
    await writer.append(TOPIC, [rec('a')]);
    const reader = await EmbeddedLog.open(dir, { pollMs: 10, readOnly: true });
    const seen: string[] = [];
    const ac = new AbortController();
    const following = reader.follow(TOPIC, 0, (r) => void seen.push(r.value.toString()), ac.signal);
    await writer.append(TOPIC, [rec('b'), rec('c')]);
    await writer.append(TOPIC, [rec('d')]);
    while (seen.length < 4) await new Promise((r) => setTimeout(r, 5));
    ac.abort();
    await following;
    expect(seen).toEqual(['a', 'b', 'c', 'd']);
    expect(await reader.endOffset(TOPIC)).toBe(4);
    await reader.close();
    await writer.close();
  });

  it('two writers in one process interleave without losing a record', async () => {
    const [a, b] = [await EmbeddedLog.open(dir), await EmbeddedLog.open(dir)];
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => ((i % 2 ? a : b) as EmbeddedLog).append(TOPIC, [rec(`r${i}`)])),
    );
    expect((await (a as EmbeddedLog).read(TOPIC, 0)).map((r) => r.offset)).toEqual(
      Array.from({ length: 20 }, (_, i) => i),
    );
    await a?.close();
    await b?.close();
  });

  it('keeps the WAL small: it is written from its start again long before 1,000 pages', async () => {
    // A WAL that grows makes each commit's fsync commit the file system's journal too, about twice
    // the cost of a commit into a WAL that has wrapped (database.ts, WAL_CHECKPOINT_PAGES).
    const log = await EmbeddedLog.open(dir);
    for (let i = 0; i < 400; i++) await log.append(TOPIC, [rec(`r${i}`, 300)]);
    const wal = statSync(join(dir, 'loopguard.db-wal')).size;
    expect(wal).toBeGreaterThan(0);
    expect(wal).toBeLessThan(400 * 4120);
    expect((await log.read(TOPIC, 0)).length).toBe(400);
    await log.close();
  });

  it('rejects appends after close and topic names that are not safe', async () => {
    const log = await EmbeddedLog.open(dir);
    await expect(log.append('../escape', [rec('x')])).rejects.toMatchObject({ code: 'bad_topic' });
    await log.close();
    await expect(log.append(TOPIC, [rec('x')])).rejects.toMatchObject({ code: 'log_closed' });
  });
});
