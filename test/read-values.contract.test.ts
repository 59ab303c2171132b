/**
 * KeyedLog.readValues, on both local logs: the values `read` gives, byte for byte and in offset
 * order, a page at a time, whatever the bytes (the embedded log concatenates a page in SQL).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EmbeddedLog } from '../src/log/embedded/embedded-log.js';
import type { KeyedLog } from '../src/log/keyed-log.js';
import { MemoryLog } from '../src/log/memory-log.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

const adapters: [string, () => Promise<KeyedLog>][] = [
  ['memory', async () => new MemoryLog()],
  [
    'embedded',
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'lg-values-'));
      dirs.push(dir);
      return EmbeddedLog.open(dir, { fsync: 'none' });
    },
  ],
];

/** Every byte value, NUL and invalid UTF-8 included, and an empty value. */
const value = (i: number): Buffer =>
  i % 7 === 3
    ? Buffer.alloc(0)
    : Buffer.from(Array.from({ length: 1 + (i % 300) }, (_, j) => (i * 31 + j) % 256));

async function pages(log: KeyedLog, topic: string, from: number, size: number) {
  const out: { values: Buffer[]; next: number }[] = [];
  for (let next = from; ; ) {
    const page = await log.readValues(topic, next, size);
    out.push({ values: [...page.values], next: page.next });
    if (page.values.length === 0) return out;
    next = page.next;
  }
}

describe.each(adapters)('readValues: %s', (_name, open) => {
  it('gives the values read() gives, page by page, with the next page offset', async () => {
    const log = await open();
    // Two topics written interleaved: a topic's offsets are not the table's row order.
    for (let i = 0; i < 40; i++) {
      await log.append(
        't.a',
        [0, 1, 2].map((k) => ({ key: `k${k}`, value: value(i * 3 + k) })),
      );
      await log.append('t.b', [{ key: 'x', value: value(1000 + i), headers: { h: String(i) } }]);
    }
    const all = (await log.read('t.a', 0)).map((r) => r.value);
    expect(all).toHaveLength(120);
    const got = await pages(log, 't.a', 0, 16);
    expect(got.map((p) => p.values.length)).toEqual([16, 16, 16, 16, 16, 16, 16, 8, 0]);
    expect(got.map((p) => p.next)).toEqual([16, 32, 48, 64, 80, 96, 112, 120, 120]);
    const values = got.flatMap((p) => p.values);
    expect(values.map((v) => v.toString('hex'))).toEqual(all.map((v) => v.toString('hex')));
    const mid = await pages(log, 't.a', 50, 1000);
    expect(mid.flatMap((p) => p.values).map((v) => v.toString('hex'))).toEqual(
      all.slice(50).map((v) => v.toString('hex')),
    );
    expect(mid.map((p) => p.next)).toEqual([120, 120]);
    expect((await log.readValues('t.b', 39, 10)).values.map((v) => v.toString('hex'))).toEqual([
      value(1039).toString('hex'),
    ]);
    expect(await log.readValues('t.none', 0, 10)).toEqual({ values: [], next: 0 });
    await log.close();
  });

  it('rejects what read() rejects', async () => {
    const log = await open();
    await expect(log.readValues('bad topic', 0, 1)).rejects.toMatchObject({ code: 'bad_topic' });
    await expect(log.readValues('t.a', -1, 1)).rejects.toMatchObject({ code: 'bad_offset' });
    await log.close();
    await expect(log.readValues('t.a', 0, 1)).rejects.toMatchObject({ code: 'log_closed' });
  });
});
