/**
 * OwnRecords answers a Kafka append check at the ack only when the fold's outcome is certain:
 * every record from the fold's position to the end of the batch is the writer's own. These
 * specs pin the cases where it must not answer (a gap: another writer, a lost append of ours)
 * and where its answer is `conflict` (the run was taken before the batch).
 */
import { describe, expect, it } from 'vitest';
import { SEQ_HEADER } from '../src/log/event-store.js';
import { OwnRecords, type PlacedHead } from '../src/log/kafka/own-records.js';
import { AFTER_HEADER, BATCH_HEADER } from '../src/log/kafka/run-batch-fold.js';

/** The headers of a batch appended after `after`, `n` records long. */
const batchHeaders = (batch: string, after: number, n: number) =>
  Array.from({ length: n }, (_, i) => ({
    [SEQ_HEADER]: String(after + 1 + i),
    [AFTER_HEADER]: String(after),
    [BATCH_HEADER]: batch,
  }));

const span = (from: number, key: string, batch: string, after: number, n: number) => ({
  from,
  to: from + n,
  key,
  headers: batchHeaders(batch, after, n),
});

const none = (): PlacedHead | undefined => undefined;

describe('OwnRecords.predict', () => {
  it('given only own records from the fold on, when a batch continues its run, then all of it counts', () => {
    const own = new OwnRecords();
    own.remember(0, span(10, 'r1', 'w/1', 0, 2));
    own.remember(0, span(12, 'r2', 'w/2', 0, 1));
    own.remember(0, span(13, 'r1', 'w/3', 2, 3));
    const p = own.predict(0, 10, none, 'w/3', 15);
    expect(p?.counted).toBe(3);
    expect(p?.heads.get('r1')).toEqual({ seq: 5, batch: 'w/3', offset: 15 });
  });

  it('given a record not known here between the fold and the batch, then there is no answer', () => {
    const own = new OwnRecords();
    own.remember(0, span(10, 'r1', 'w/1', 0, 2));
    // Offset 12 is someone else's (or an append of ours that failed and may have landed).
    own.remember(0, span(13, 'r1', 'w/2', 2, 1));
    expect(own.predict(0, 10, none, 'w/2', 13)).toBeUndefined();
  });

  it('given a fold that has not reached our first record, then there is no answer', () => {
    const own = new OwnRecords();
    own.remember(0, span(10, 'r1', 'w/1', 0, 1));
    expect(own.predict(0, 9, none, 'w/1', 10)).toBeUndefined();
  });

  it('given a run the fold already has further on, when a batch appends at a seq taken, then none of it counts', () => {
    const own = new OwnRecords();
    own.remember(0, span(20, 'r1', 'w/1', 1, 2));
    const folded = (key: string): PlacedHead | undefined =>
      key === 'r1' ? { seq: 3, batch: 'other/7', offset: 19 } : undefined;
    const p = own.predict(0, 20, folded, 'w/1', 21);
    expect(p?.counted).toBe(0);
  });

  it('given a fold in the middle of the batch, then only the records from its position on are counted here', () => {
    const own = new OwnRecords();
    own.remember(0, span(10, 'r1', 'w/1', 0, 4));
    const folded = (key: string): PlacedHead | undefined =>
      key === 'r1' ? { seq: 1, batch: 'w/1', offset: 10 } : undefined;
    const p = own.predict(0, 11, folded, 'w/1', 13);
    expect(p?.counted).toBe(3);
    expect(p?.heads.get('r1')).toEqual({ seq: 4, batch: 'w/1', offset: 13 });
  });

  it('given a fold past the batch already, then there is no answer (the fold counted it itself)', () => {
    const own = new OwnRecords();
    own.remember(0, span(10, 'r1', 'w/1', 0, 2));
    expect(own.predict(0, 12, none, 'w/1', 11)).toBeUndefined();
  });

  it('keeps partitions apart', () => {
    const own = new OwnRecords();
    own.remember(1, span(0, 'r1', 'w/1', 0, 1));
    expect(own.predict(0, 0, none, 'w/1', 0)).toBeUndefined();
    expect(own.predict(1, 0, none, 'w/1', 0)?.counted).toBe(1);
  });
});
