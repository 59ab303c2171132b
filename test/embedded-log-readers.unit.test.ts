import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EmbeddedLog } from '../src/log/embedded/embedded-log.js';

const T = 'shared.topic';
const rec = (v: string) => ({ key: 'k', value: Buffer.from(v) });

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lg-readers-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('embedded log shared by a writer and readers', () => {
  it('lets a second instance read and follow what the writer appends after it opened', async () => {
    const writer = await EmbeddedLog.open(dir, { segmentBytes: 80 });
    await writer.append(T, [rec('a')]);
    const reader = await EmbeddedLog.open(dir, { pollMs: 10 });
    const seen: string[] = [];
    const ac = new AbortController();
    const following = reader.follow(T, 0, (r) => void seen.push(r.value.toString()), ac.signal);
    await writer.append(T, [rec('b'), rec('c')]);
    await writer.append(T, [rec('d')]);
    while (seen.length < 4) await new Promise((r) => setTimeout(r, 5));
    ac.abort();
    await following;
    expect(seen).toEqual(['a', 'b', 'c', 'd']);
    expect(await reader.endOffset(T)).toBe(4);
    await reader.close();
    await writer.close();
  });

  it('allows one writer per topic at a time', async () => {
    const first = await EmbeddedLog.open(dir);
    await first.append(T, [rec('a')]);
    const second = await EmbeddedLog.open(dir);
    await expect(second.append(T, [rec('b')])).rejects.toMatchObject({ code: 'log_locked' });
    await first.close();
    expect(await second.append(T, [rec('b')])).toEqual([1]);
    await second.close();
  });

  it('rejects appends after close and topic names that are not safe directory names', async () => {
    const log = await EmbeddedLog.open(dir);
    await expect(log.append('../escape', [rec('x')])).rejects.toMatchObject({ code: 'bad_topic' });
    await log.close();
    await expect(log.append(T, [rec('x')])).rejects.toMatchObject({ code: 'log_closed' });
  });
});
