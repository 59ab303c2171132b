/**
 * The Kafka log's batching (src/log/kafka/append-batcher.ts) without a broker: a lone append is
 * sent at once, appends made while a send is in flight share the next one, sends never overlap,
 * and offsets come back to each append in call order. The linger, when asked for, waits for company.
 */
import { describe, expect, it } from 'vitest';
import type { LogRecord } from '../src/log/event-log.js';
import { AppendBatcher, type PendingAppend } from '../src/log/kafka/append-batcher.js';

const rec = (key: string): LogRecord => ({ key, value: Buffer.from(key) });

/** A send the test answers by hand, as a broker's ack would arrive. */
function manualSend() {
  const sent: { appends: readonly PendingAppend[]; ack: () => void; fail: (e: unknown) => void }[] = [];
  let next = 0;
  let inFlight = 0;
  let overlapped = false;
  const send = (appends: readonly PendingAppend[]) =>
    new Promise<number[][]>((resolve, reject) => {
      if (++inFlight > 1) overlapped = true;
      sent.push({
        appends,
        ack: () => {
          inFlight--;
          resolve(appends.map((a) => a.records.map(() => next++)));
        },
        fail: (e) => {
          inFlight--;
          reject(e);
        },
      });
    });
  return { sent, send, overlapped: () => overlapped };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('AppendBatcher', () => {
  it('sends a lone append at once, with no linger', () => {
    const m = manualSend();
    const b = new AppendBatcher(m.send, { lingerMs: 0, maxBatchRecords: 100, maxBatchBytes: 1 << 20 });
    void b.append('runs', [rec('a')]);
    // Sent in the same turn, before any timer could fire.
    expect(m.sent.map((s) => s.appends.length)).toEqual([1]);
  });

  it('batches the appends made while a send is in flight into the next send, in call order', async () => {
    const m = manualSend();
    const b = new AppendBatcher(m.send, { lingerMs: 0, maxBatchRecords: 100, maxBatchBytes: 1 << 20 });
    const first = b.append('runs', [rec('a'), rec('b')]);
    const later = [
      b.append('runs', [rec('c')]),
      b.append('stops', [rec('d'), rec('e')]),
      b.append('runs', [rec('f')]),
    ];
    expect(m.sent).toHaveLength(1);
    m.sent[0]?.ack();
    expect(await first).toEqual([0, 1]);
    await tick();
    expect(m.sent).toHaveLength(2);
    expect(m.sent[1]?.appends.map((a) => a.records.map((r) => r.key).join(''))).toEqual(['c', 'de', 'f']);
    m.sent[1]?.ack();
    expect(await Promise.all(later)).toEqual([[2], [3, 4], [5]]);
    expect(m.overlapped()).toBe(false);
  });

  it('caps a batch by records, and a failed send fails only its own appends', async () => {
    const m = manualSend();
    const b = new AppendBatcher(m.send, { lingerMs: 0, maxBatchRecords: 2, maxBatchBytes: 1 << 20 });
    const first = b.append('runs', [rec('a')]);
    const queued = [b.append('runs', [rec('b')]), b.append('runs', [rec('c')]), b.append('runs', [rec('d')])];
    m.sent[0]?.fail(new Error('broker gone'));
    await expect(first).rejects.toThrow('broker gone');
    await tick();
    expect(m.sent[1]?.appends.map((a) => a.records[0]?.key)).toEqual(['b', 'c']);
    m.sent[1]?.ack();
    await tick();
    expect(m.sent[2]?.appends.map((a) => a.records[0]?.key)).toEqual(['d']);
    m.sent[2]?.ack();
    expect(await Promise.all(queued)).toEqual([[0], [1], [2]]);
  });

  it('with a linger, waits for company before a send when none is in flight', async () => {
    const m = manualSend();
    const b = new AppendBatcher(m.send, { lingerMs: 20, maxBatchRecords: 100, maxBatchBytes: 1 << 20 });
    void b.append('runs', [rec('a')]);
    void b.append('runs', [rec('b')]);
    expect(m.sent).toHaveLength(0);
    await new Promise((r) => setTimeout(r, 40));
    expect(m.sent.map((s) => s.appends.length)).toEqual([2]);
  });
});
