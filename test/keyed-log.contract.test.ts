/**
 * What the local logs (memory, embedded) add to the EventLog contract for their writers: an append
 * made only where a topic ends (the copy projectors'), whose loser writes nothing.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EmbeddedLog } from '../src/log/embedded/embedded-log.js';
import type { KeyedLog } from '../src/log/keyed-log.js';
import { MemoryLog } from '../src/log/memory-log.js';

const rec = (v: string) => ({ key: 'k', value: Buffer.from(v) });
const values = async (log: KeyedLog, topic: string) =>
  (await log.read(topic, 0)).map((r) => r.value.toString());

const adapters: Record<string, () => Promise<{ log: KeyedLog; cleanup: () => Promise<void> }>> = {
  memory: async () => {
    const log = new MemoryLog();
    return { log, cleanup: () => log.close() };
  },
  embedded: async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lg-keyed-'));
    const log = await EmbeddedLog.open(dir);
    return {
      log,
      cleanup: async () => {
        await log.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  },
};

for (const [name, open] of Object.entries(adapters)) {
  describe(`KeyedLog appendAfter: ${name}`, () => {
    it('appends where the topic ends, and refuses anywhere else with conflict, writing nothing', async () => {
      const { log, cleanup } = await open();
      try {
        expect(await log.appendAfter('t.copies', 0, [rec('a'), rec('b')])).toEqual([0, 1]);
        await expect(log.appendAfter('t.copies', 1, [rec('x')])).rejects.toMatchObject({
          code: 'conflict',
          details: { topic: 't.copies', expected: 1, actual: 2 },
        });
        await expect(log.appendAfter('t.copies', 3, [rec('x')])).rejects.toMatchObject({ code: 'conflict' });
        expect(await log.appendAfter('t.copies', 2, [rec('c')])).toEqual([2]);
        expect(await values(log, 't.copies')).toEqual(['a', 'b', 'c']);
        await expect(log.appendAfter('t.copies', -1, [rec('x')])).rejects.toMatchObject({
          code: 'bad_offset',
        });
      } finally {
        await cleanup();
      }
    });

    it('of two appends made at the same end at once, one is written', async () => {
      const { log, cleanup } = await open();
      try {
        const tries = await Promise.allSettled([
          log.appendAfter('t.copies', 0, [rec('first')]),
          log.appendAfter('t.copies', 0, [rec('second')]),
        ]);
        expect(tries.map((t) => t.status).sort()).toEqual(['fulfilled', 'rejected']);
        expect(await values(log, 't.copies')).toHaveLength(1);
      } finally {
        await cleanup();
      }
    });
  });
}
