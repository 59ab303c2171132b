/**
 * The RunStream contract, run against every adapter (memory, embedded, Kafka): a run read from a
 * seq, appended at an expected seq, and a second writer refused with `conflict`, never dropped.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RecordedEvent } from '../src/domain/events.js';
import { initialState } from '../src/domain/run-state.js';
import type { EventStore } from '../src/log/event-store.js';
import type { RunStream } from '../src/ports/run-stream.js';
import { SAMPLE_EVENTS } from './log-sample-events.js';
import { foldEvents, runEvents } from './support/run-events.js';

export interface RunStreamFixture {
  readonly stream: RunStream;
  readonly events: EventStore;
  /** Another stream over the same log, as another writer of the same runs would have. */
  second(): RunStream;
  /** A run id no other test uses. */
  readonly runId: (base: string) => string;
  /**
   * Resolves once the stops and ledger copies of what the runs topic holds are made: at once for
   * the local logs (an append waits for its copies); on Kafka, a run of its copy projector.
   */
  copied(): Promise<void>;
  cleanup(): Promise<void>;
}

const seqs = (es: readonly RecordedEvent[]): number[] => es.map((e) => e.seq);

export function runStreamContract(name: string, make: () => Promise<RunStreamFixture>): void {
  describe(`RunStream contract: ${name}`, () => {
    let f: RunStreamFixture;
    beforeEach(async () => {
      f = await make();
    });
    afterEach(async () => {
      await f.cleanup();
    });

    it('reads a run back from its first seq and from a middle seq; an unknown run is empty', async () => {
      const id = f.runId('read');
      await f.stream.appendToStream(id, runEvents(id, 0, 3), { expectedStreamVersion: 0 });
      await f.stream.appendToStream(id, runEvents(id, 3, 2), { expectedStreamVersion: 3 });
      expect(await f.stream.readStream(id)).toEqual(runEvents(id, 0, 5));
      expect(seqs(await f.stream.readStream(id, 4))).toEqual([4, 5]);
      expect(await f.stream.readStream(id, 6)).toEqual([]);
      expect(await f.stream.readStream(f.runId('never-written'))).toEqual([]);
    });

    it("finds a run's sub-agents from their RunStarted, also those started after the first look, sorted by run id", async () => {
      // b sorts before a, and starts after it: the answer's order is the ids', on any partitioning.
      const [boss, a, b, other] = ['boss', 'z', 'b', 'other'].map((n) => f.runId(`kids-${n}`)) as [
        string,
        string,
        string,
        string,
      ];
      const started = (id: string, parentRunId: string | null): RecordedEvent[] => {
        const [first, ...rest] = runEvents(id, 0, 2);
        const e = first?.event;
        if (first === undefined || e?.type !== 'RunStarted') throw new Error('sample starts with RunStarted');
        return [{ ...first, event: { ...e, runId: id, parentRunId } }, ...rest];
      };
      await f.stream.appendToStream(boss, started(boss, null), { expectedStreamVersion: 0 });
      await f.stream.appendToStream(a, started(a, boss), { expectedStreamVersion: 0 });
      await f.stream.appendToStream(other, started(other, null), { expectedStreamVersion: 0 });
      expect(await f.stream.childrenOf(boss)).toEqual([a]);
      await f.stream.appendToStream(b, started(b, boss), { expectedStreamVersion: 0 });
      expect(await f.stream.childrenOf(boss)).toEqual([b, a]);
      expect(await f.second().childrenOf(boss)).toEqual([b, a]);
      expect(await f.stream.childrenOf(a)).toEqual([]);
    });

    it('keeps runs apart however their appends interleave', async () => {
      const ids = ['a', 'b', 'c'].map((b) => f.runId(`apart-${b}`));
      for (let round = 0; round < 3; round++)
        await Promise.all(
          ids.map((id, i) =>
            f.stream.appendToStream(id, runEvents(id, round * (i + 1), i + 1), {
              expectedStreamVersion: round * (i + 1),
            }),
          ),
        );
      for (const [i, id] of ids.entries())
        expect(await f.stream.readStream(id)).toEqual(runEvents(id, 0, 3 * (i + 1)));
    });

    it('refuses an append at a seq the stream is not at with `conflict`, and the stream stays as it was', async () => {
      const id = f.runId('conflict');
      await f.stream.appendToStream(id, runEvents(id, 0, 2), { expectedStreamVersion: 0 });
      await expect(
        f.stream.appendToStream(id, runEvents(id, 0, 1), { expectedStreamVersion: 0 }),
      ).rejects.toMatchObject({
        code: 'conflict',
        details: { runId: id, expectedStreamVersion: 0, actualStreamVersion: 2 },
      });
      await expect(
        f.stream.appendToStream(id, runEvents(id, 5, 1), { expectedStreamVersion: 5 }),
      ).rejects.toMatchObject({
        code: 'conflict',
        details: { expectedStreamVersion: 5, actualStreamVersion: 2 },
      });
      expect(seqs(await f.stream.readStream(id))).toEqual([1, 2]);
      await f.stream.appendToStream(id, runEvents(id, 2, 1), { expectedStreamVersion: 2 });
      expect(seqs(await f.stream.readStream(id))).toEqual([1, 2, 3]);
    });

    it('lets exactly one of two concurrent appends at the same seq in', async () => {
      const id = f.runId('race');
      await f.stream.appendToStream(id, runEvents(id, 0, 1), { expectedStreamVersion: 0 });
      const mine = runEvents(id, 1, 2);
      const theirs = runEvents(id, 1, 1).map((e) => ({ ...e, eventId: 'theirs' }));
      const results = await Promise.allSettled([
        f.stream.appendToStream(id, mine, { expectedStreamVersion: 1 }),
        f.stream.appendToStream(id, theirs, { expectedStreamVersion: 1 }),
      ]);
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected']);
      expect((results[1] as PromiseRejectedResult).reason).toMatchObject({ code: 'conflict' });
      expect(await f.stream.readStream(id)).toEqual([...runEvents(id, 0, 1), ...mine]);
    });

    it('refuses a second writer that appends at a seq it did not read', async () => {
      const id = f.runId('second');
      const other = f.second();
      await f.stream.appendToStream(id, runEvents(id, 0, 2), { expectedStreamVersion: 0 });
      await expect(
        other.appendToStream(id, runEvents(id, 0, 1), { expectedStreamVersion: 0 }),
      ).rejects.toMatchObject({ code: 'conflict' });
      expect(seqs(await other.readStream(id))).toEqual([1, 2]);
      await other.appendToStream(id, runEvents(id, 2, 1), { expectedStreamVersion: 2 });
      await expect(
        f.stream.appendToStream(id, runEvents(id, 2, 1), { expectedStreamVersion: 2 }),
      ).rejects.toMatchObject({ code: 'conflict' });
      expect(seqs(await f.stream.readStream(id))).toEqual([1, 2, 3]);
    });

    it('refuses events that do not continue the stream before writing anything', async () => {
      const id = f.runId('bad');
      const gap = runEvents(id, 0, 3).filter((e) => e.seq !== 2);
      await expect(f.stream.appendToStream(id, gap, { expectedStreamVersion: 0 })).rejects.toMatchObject({
        code: 'bad_append',
        message: expect.stringMatching(/seq 3, expected 2/),
      });
      await expect(
        f.stream.appendToStream(id, runEvents(f.runId('other'), 0, 1), { expectedStreamVersion: 0 }),
      ).rejects.toMatchObject({
        code: 'bad_append',
        message: expect.stringMatching(/is not the stream's/),
      });
      await expect(f.stream.readStream(id, 0)).rejects.toMatchObject({ code: 'bad_offset' });
      expect(await f.stream.readStream(id)).toEqual([]);
    });

    it('reads every run through readAll as its own stream reads it, past a refused second writer', async () => {
      const [a, b] = [f.runId('all-a'), f.runId('all-b')];
      expect(await f.stream.appendToStream(a, runEvents(a, 0, 2), { expectedStreamVersion: 0 })).toEqual({
        nextExpectedStreamVersion: 2,
      });
      await f.stream.appendToStream(b, runEvents(b, 0, 1), { expectedStreamVersion: 0 });
      const theirs = runEvents(a, 0, 3).map((e) => ({ ...e, eventId: `theirs-${e.seq}` }));
      await expect(f.second().appendToStream(a, theirs, { expectedStreamVersion: 0 })).rejects.toMatchObject({
        code: 'conflict',
      });
      await f.stream.appendToStream(b, runEvents(b, 1, 2), { expectedStreamVersion: 1 });
      const all = new Map<string, RecordedEvent[]>();
      const read = await f.stream.readAll((e) => all.set(e.runId, [...(all.get(e.runId) ?? []), e]));
      expect(all.get(a)).toEqual(await f.stream.readStream(a));
      expect(all.get(b)).toEqual(await f.stream.readStream(b));
      expect(seqs(all.get(a) ?? [])).toEqual([1, 2]);
      expect(read).toBeGreaterThanOrEqual(5);
    });

    it('loads a run as the state its events fold to, whether or not a snapshot was taken', async () => {
      const id = f.runId('load');
      const all = runEvents(id, 0, 8);
      await f.stream.appendToStream(id, all.slice(0, 5), { expectedStreamVersion: 0 });
      f.stream.snapshot(foldEvents(initialState(id), all.slice(0, 5)));
      await f.stream.appendToStream(id, all.slice(5), { expectedStreamVersion: 5 });
      const loaded = await f.stream.load(id);
      expect(foldEvents(loaded.snapshot ?? initialState(id), loaded.events)).toEqual(
        foldEvents(initialState(id), all),
      );
      expect(await f.stream.load(f.runId('not-there'))).toEqual({ snapshot: null, events: [] });
    });

    it('publishes the stops of a run on the stops topic once the run has them', async () => {
      const id = f.runId('stops');
      const all = runEvents(id, 0, SAMPLE_EVENTS.length);
      await f.stream.appendToStream(id, all, { expectedStreamVersion: 0 });
      await f.copied();
      const stops: RecordedEvent[] = [];
      for await (const e of f.events.readStops(0)) if (e.runId === id) stops.push(e);
      expect(stops).toEqual(all.filter((e) => e.event.type === 'RunStopped'));
    });
  });
}
