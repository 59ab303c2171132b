/**
 * The EventLog contract, run against every adapter (memory, embedded, Kafka). Each test gets its
 * own topic from `topic(base)`, so adapters backed by shared infrastructure need no cleanup between
 * tests.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventLog, LogRecord, StoredRecord } from '../src/log/event-log.js';

export interface ContractFixture {
  readonly log: EventLog;
  readonly topic: (base: string) => string;
  cleanup(): Promise<void>;
}

const rec = (key: string, value: string, headers?: Record<string, string>): LogRecord =>
  headers === undefined ? { key, value: Buffer.from(value) } : { key, value: Buffer.from(value), headers };

const text = (rs: readonly StoredRecord[]): string[] => rs.map((r) => r.value.toString());

async function waitFor(cond: () => boolean, ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 5));
  }
}

export function eventLogContract(name: string, makeLog: () => Promise<ContractFixture>): void {
  describe(`EventLog contract: ${name}`, () => {
    let f: ContractFixture;
    beforeEach(async () => {
      f = await makeLog();
    });
    afterEach(async () => {
      await f.cleanup();
    });

    it('appends and reads records back in order with dense offsets from 0', async () => {
      const t = f.topic('order');
      expect(await f.log.append(t, [rec('a', '1'), rec('b', '2')])).toEqual([0, 1]);
      expect(await f.log.append(t, [rec('a', '3')])).toEqual([2]);
      const rs = await f.log.read(t, 0);
      expect(rs.map((r) => [r.topic, r.offset, r.key, r.value.toString()])).toEqual([
        [t, 0, 'a', '1'],
        [t, 1, 'b', '2'],
        [t, 2, 'a', '3'],
      ]);
    });

    it('keeps keys, binary values and headers; records without headers have none', async () => {
      const t = f.topic('headers');
      const bin = Buffer.from([0, 255, 1, 254, 0]);
      await f.log.append(t, [
        { key: 'ключ', value: bin, headers: { 'loopguard.type': 'RunStopped', trace: 'x=1' } },
        rec('plain', ''),
      ]);
      const [a, b] = await f.log.read(t, 0);
      expect(a?.key).toBe('ключ');
      expect(a?.value.equals(bin)).toBe(true);
      expect(a?.headers).toEqual({ 'loopguard.type': 'RunStopped', trace: 'x=1' });
      expect(b?.value.length).toBe(0);
      expect(b?.headers === undefined || Object.keys(b.headers).length === 0).toBe(true);
    });

    it('treats an empty batch as a no-op', async () => {
      const t = f.topic('empty');
      expect(await f.log.append(t, [])).toEqual([]);
      expect(await f.log.endOffset(t)).toBe(0);
      expect(await f.log.read(t, 0)).toEqual([]);
    });

    it('reads from a middle offset, honours maxRecords, and returns nothing past the end', async () => {
      const t = f.topic('middle');
      await f.log.append(
        t,
        ['0', '1', '2', '3', '4', '5'].map((v) => rec('k', v)),
      );
      expect(text(await f.log.read(t, 3))).toEqual(['3', '4', '5']);
      expect(text(await f.log.read(t, 1, 2))).toEqual(['1', '2']);
      expect((await f.log.read(t, 4, 100)).map((r) => r.offset)).toEqual([4, 5]);
      expect(await f.log.read(t, 6)).toEqual([]);
      expect(await f.log.read(t, 60)).toEqual([]);
    });

    it('reports the end offset of unknown and written topics', async () => {
      const t = f.topic('end');
      expect(await f.log.endOffset(t)).toBe(0);
      await f.log.append(t, [rec('k', 'a'), rec('k', 'b'), rec('k', 'c')]);
      expect(await f.log.endOffset(t)).toBe(3);
    });

    it('keeps topics apart', async () => {
      const t1 = f.topic('apart1');
      const t2 = f.topic('apart2');
      await f.log.append(t1, [rec('k', 'one')]);
      await f.log.append(t2, [rec('k', 'two'), rec('k', 'three')]);
      expect(text(await f.log.read(t1, 0))).toEqual(['one']);
      expect(text(await f.log.read(t2, 0))).toEqual(['two', 'three']);
    });

    it('keeps every record of concurrent appends, each batch contiguous and in call order', async () => {
      const t = f.topic('concurrent');
      const batches = Array.from({ length: 50 }, (_, i) => [rec(`k${i}`, `${i}.a`), rec(`k${i}`, `${i}.b`)]);
      const results = await Promise.all(batches.map((b) => f.log.append(t, b)));
      for (const offsets of results) expect(offsets[1]).toBe((offsets[0] as number) + 1);
      const all = await f.log.read(t, 0);
      expect(all).toHaveLength(100);
      expect(all.map((r) => r.offset)).toEqual(Array.from({ length: 100 }, (_, i) => i));
      results.forEach((offsets, i) => {
        expect(text(offsets.map((o) => all[o] as StoredRecord))).toEqual([`${i}.a`, `${i}.b`]);
      });
      expect(results.map((o) => o[0])).toEqual([...results.map((o) => o[0] as number)].sort((a, b) => a - b));
    });

    it('follow delivers existing records, then later appends, and resolves on abort', async () => {
      const t = f.topic('follow');
      await f.log.append(t, [rec('k', '0'), rec('k', '1'), rec('k', '2')]);
      const seen: StoredRecord[] = [];
      const ac = new AbortController();
      const done = f.log.follow(t, 1, (r) => void seen.push(r), ac.signal);
      await waitFor(() => seen.length === 2);
      await f.log.append(t, [rec('k', '3')]);
      await f.log.append(t, [rec('k', '4')]);
      await waitFor(() => seen.length === 4);
      ac.abort();
      await expect(done).resolves.toBeUndefined();
      await f.log.append(t, [rec('k', '5')]);
      await new Promise((r) => setTimeout(r, 50));
      expect(seen.map((r) => [r.offset, r.value.toString()])).toEqual([
        [1, '1'],
        [2, '2'],
        [3, '3'],
        [4, '4'],
      ]);
    });

    it('follow on an empty topic waits for the first record; an aborted signal ends it at once', async () => {
      const t = f.topic('follow-empty');
      const seen: string[] = [];
      const ac = new AbortController();
      const done = f.log.follow(
        t,
        0,
        async (r) => {
          await new Promise((res) => setTimeout(res, 1));
          seen.push(r.value.toString());
        },
        ac.signal,
      );
      await f.log.append(t, [rec('k', 'first'), rec('k', 'second')]);
      await waitFor(() => seen.length === 2);
      ac.abort();
      await done;
      expect(seen).toEqual(['first', 'second']);
      const pre = new AbortController();
      pre.abort();
      await expect(f.log.follow(t, 0, () => undefined, pre.signal)).resolves.toBeUndefined();
    });

    it('follow rejects when the handler throws', async () => {
      const t = f.topic('follow-throw');
      await f.log.append(t, [rec('k', 'x')]);
      const ac = new AbortController();
      const done = f.log.follow(
        t,
        0,
        () => {
          throw new Error('handler failed');
        },
        ac.signal,
      );
      await expect(done).rejects.toThrow('handler failed');
      ac.abort();
    });
  });
}
