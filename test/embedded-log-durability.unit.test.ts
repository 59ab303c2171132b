/**
 * What the embedded log acknowledges is on disk and stays readable: short writes, a full disk,
 * an oversized record, a torn tail of garbage, a missing segment. Faults are injected through the
 * log's one write primitive (SegmentIo), so every case is exact and needs no special filesystem.
 */
import { appendFile, mkdtemp, readdir, rm, stat, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EmbeddedLog, type EmbeddedLogOptions } from '../src/log/embedded/embedded-log.js';
import { nodeSegmentIo, type SegmentIo } from '../src/log/embedded/segment-io.js';

const TOPIC = 'durable.test';
let dir: string;
const notes: string[] = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lg-durable-'));
  notes.length = 0;
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const rec = (v: string) => ({ key: 'k', value: Buffer.from(v) });
const open = (opts: EmbeddedLogOptions = {}) =>
  EmbeddedLog.open(dir, { note: (l) => notes.push(l), ...opts });
const values = async (log: EmbeddedLog) => (await log.read(TOPIC, 0)).map((r) => r.value.toString());
const segments = async () =>
  (await readdir(join(dir, 'topics', TOPIC)))
    .filter((n) => n.endsWith('.seg'))
    .sort()
    .map((n) => join(dir, 'topics', TOPIC, n));

/** A SegmentIo that misbehaves while `fault` is set: writes part of what it is given, then fails. */
function faulty(): SegmentIo & { fault: ((call: number) => 'half' | 'zero' | 'enospc' | 'one') | null } {
  let calls = 0;
  const io = {
    fault: null as ((call: number) => 'half' | 'zero' | 'enospc' | 'one') | null,
    async write(...[fh, data, offset, length, position]: Parameters<SegmentIo['write']>) {
      const what = io.fault?.(calls++);
      if (what === undefined) return nodeSegmentIo.write(fh, data, offset, length, position);
      if (what === 'enospc')
        throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
      if (what === 'zero') return 0;
      const n = what === 'one' ? 1 : Math.max(1, length >> 1);
      return nodeSegmentIo.write(fh, data, offset, n, position);
    },
  };
  return io;
}

describe('embedded log durability', () => {
  it('never acknowledges a batch cut short by a full disk; what was acknowledged stays readable', async () => {
    const io = faulty();
    const log = await open({ io });
    await log.append(TOPIC, [rec('a'), rec('b')]);
    const before = (await stat((await segments())[0] as string)).size;
    io.fault = (call) => (call === 0 ? 'half' : 'enospc');
    await expect(log.append(TOPIC, [rec('c'), rec('d')])).rejects.toMatchObject({
      code: 'disk_full',
      retriable: true,
      message: expect.stringMatching(/no space left.*not acknowledged/),
    });
    expect((await stat((await segments())[0] as string)).size).toBe(before);
    expect(await values(log)).toEqual(['a', 'b']);
    io.fault = null;
    expect(await log.append(TOPIC, [rec('e')])).toEqual([2]);
    await log.close();
    const reopened = await open();
    expect(await values(reopened)).toEqual(['a', 'b', 'e']);
    await reopened.close();
  });

  it('finishes a write the system took in pieces, and refuses one that makes no progress', async () => {
    const io = faulty();
    const log = await open({ io });
    io.fault = () => 'one';
    expect(await log.append(TOPIC, [rec('piece'), rec('by piece')])).toEqual([0, 1]);
    io.fault = () => 'zero';
    await expect(log.append(TOPIC, [rec('stuck')])).rejects.toMatchObject({ code: 'disk_full' });
    io.fault = null;
    await log.close();
    const reopened = await open();
    expect(await values(reopened)).toEqual(['piece', 'by piece']);
    await reopened.close();
  });

  it('refuses a record over the size limit before writing anything, naming it', async () => {
    const log = await open({ maxRecordBytes: 1000 });
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
    const reopened = await open();
    expect(await values(reopened)).toEqual(['small', 'after']);
    await reopened.close();
  });

  it('reads up to the last complete record of a tail of garbage, says so once, and keeps the cut bytes', async () => {
    const log = await open();
    await log.append(TOPIC, [rec('one'), rec('two')]);
    await log.close();
    const seg = (await segments())[0] as string;
    await appendFile(seg, Buffer.concat([Buffer.alloc(4, 0xff), Buffer.alloc(36, 0x5a)]));
    const reader = await open();
    expect(await values(reader)).toEqual(['one', 'two']);
    expect(await values(reader)).toEqual(['one', 'two']);
    expect(notes.filter((n) => n.includes('torn tail at byte'))).toHaveLength(1);
    expect(notes[0]).toMatch(/invalid record length .* no complete record after it/);
    expect(await reader.append(TOPIC, [rec('three')])).toEqual([2]);
    expect(notes.at(-1)).toMatch(/cut a torn tail of 40 bytes .* kept in .*damaged/);
    const kept = await readdir(join(dir, 'damaged', TOPIC));
    expect(kept).toHaveLength(1);
    expect((await stat(join(dir, 'damaged', TOPIC, kept[0] as string))).size).toBe(40);
    await reader.close();
  });

  it('reports a missing segment with the file and the offset it held, not a stack trace', async () => {
    const log = await open({ segmentBytes: 60 });
    for (let i = 0; i < 12; i++) await log.append(TOPIC, [rec(`value-${i}`)]);
    await log.close();
    const segs = await segments();
    expect(segs.length).toBeGreaterThan(3);
    await unlink(segs[1] as string);
    await expect(open()).rejects.toMatchObject({
      code: 'log_corrupt',
      message: expect.stringMatching(
        /segment holding records from offset \d+ is missing .*next file is .*\.seg/,
      ),
    });
  });

  it('names the file and byte of damage in the middle of a segment', async () => {
    const log = await open();
    await log.append(TOPIC, [rec('one'), rec('two'), rec('three')]);
    await log.close();
    const seg = (await segments())[0] as string;
    const fh = await (await import('node:fs/promises')).open(seg, 'r+');
    await fh.write(Buffer.from('X'), 0, 1, 20);
    await fh.close();
    await expect(open()).rejects.toMatchObject({
      code: 'log_corrupt',
      message: expect.stringContaining(`${seg} at byte 0: CRC mismatch`),
    });
  });
});
