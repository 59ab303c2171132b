import { spawn } from 'node:child_process';
import { appendFile, mkdtemp, open, readdir, rm, stat, truncate } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EmbeddedLog } from '../src/log/embedded/embedded-log.js';
import { INDEX_FILE } from '../src/log/embedded/topic-index.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TOPIC = 'crash.test';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lg-crash-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function segments(): Promise<string[]> {
  const tdir = join(dir, 'topics', TOPIC);
  return (await readdir(tdir))
    .filter((n) => n.endsWith('.seg'))
    .sort()
    .map((n) => join(tdir, n));
}

async function lastSegment(): Promise<string> {
  return (await segments()).at(-1) as string;
}

async function writeRecords(n: number, opts = {}): Promise<void> {
  const log = await EmbeddedLog.open(dir, opts);
  for (let i = 0; i < n; i++) await log.append(TOPIC, [{ key: `k${i}`, value: Buffer.from(`value-${i}`) }]);
  await log.close();
}

async function values(log: EmbeddedLog): Promise<string[]> {
  return (await log.read(TOPIC, 0)).map((r) => r.value.toString());
}

const expected = (n: number): string[] => Array.from({ length: n }, (_, i) => `value-${i}`);

describe('embedded log after a torn write', () => {
  it('cuts a last record truncated mid-way and continues after it', async () => {
    await writeRecords(5);
    const seg = await lastSegment();
    const { size } = await stat(seg);
    await truncate(seg, size - 4);
    const log = await EmbeddedLog.open(dir);
    expect(await values(log)).toEqual(expected(4));
    expect(await log.endOffset(TOPIC)).toBe(4);
    expect(await log.append(TOPIC, [{ key: 'k', value: Buffer.from('after') }])).toEqual([4]);
    await log.close();
    const reopened = await EmbeddedLog.open(dir);
    expect(await values(reopened)).toEqual([...expected(4), 'after']);
    await reopened.close();
  });

  it('cuts a last record whose CRC does not match', async () => {
    await writeRecords(3);
    const seg = await lastSegment();
    const { size } = await stat(seg);
    const fh = await open(seg, 'r+');
    await fh.write(Buffer.from('X'), 0, 1, size - 1);
    await fh.close();
    const log = await EmbeddedLog.open(dir);
    expect(await values(log)).toEqual(expected(2));
    expect(await log.append(TOPIC, [{ key: 'k', value: Buffer.from('next') }])).toEqual([2]);
    expect(await values(log)).toEqual([...expected(2), 'next']);
    await log.close();
  });

  it('cuts a zero-filled tail (file extended, data never written)', async () => {
    await writeRecords(3);
    await appendFile(await lastSegment(), Buffer.alloc(100));
    const log = await EmbeddedLog.open(dir);
    expect(await values(log)).toEqual(expected(3));
    expect(await log.append(TOPIC, [{ key: 'k', value: Buffer.from('next') }])).toEqual([3]);
    await log.close();
    expect((await EmbeddedLog.open(dir).then(async (l) => [await values(l), await l.close()]))[0]).toEqual([
      ...expected(3),
      'next',
    ]);
  });

  it('refuses to read over a damaged record that is followed by more data', async () => {
    await writeRecords(3);
    const seg = await lastSegment();
    const fh = await open(seg, 'r+');
    await fh.write(Buffer.from('X'), 0, 1, 20);
    await fh.close();
    const log = await EmbeddedLog.open(dir);
    await expect(log.read(TOPIC, 0)).rejects.toMatchObject({ code: 'log_corrupt' });
    await log.close();
    await rm(join(dir, 'topics', TOPIC, INDEX_FILE));
    await expect(EmbeddedLog.open(dir)).rejects.toMatchObject({ code: 'log_corrupt' });
  });

  it('recovers across segment rolls: only the last segment can be torn', async () => {
    await writeRecords(40, { segmentBytes: 100 });
    expect((await segments()).length).toBeGreaterThan(3);
    const seg = await lastSegment();
    await truncate(seg, (await stat(seg)).size - 1);
    const log = await EmbeddedLog.open(dir, { segmentBytes: 100 });
    expect(await values(log)).toEqual(expected(39));
    expect((await log.read(TOPIC, 17, 3)).map((r) => r.value.toString())).toEqual(expected(20).slice(17));
    await log.close();
  });
});

describe('embedded log when the writer is killed', () => {
  it('keeps every append the killed process acknowledged', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/log-crash-writer.ts', dir, TOPIC], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    const exited = new Promise<NodeJS.Signals | null>((r) => child.on('exit', (_c, sig) => r(sig)));
    const started = Date.now();
    while ((out.match(/\n/g)?.length ?? 0) < 3000 && Date.now() - started < 15_000) {
      await new Promise((r) => setTimeout(r, 20));
    }
    child.kill('SIGKILL');
    expect(await exited, err).toBe('SIGKILL');

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
    // The dead writer's lock is taken over and appends continue right after the last record.
    const end = records.length;
    expect(await log.append(TOPIC, [{ key: 'k', value: Buffer.from('after-crash') }])).toEqual([end]);
    await log.close();
  }, 30_000);
});
