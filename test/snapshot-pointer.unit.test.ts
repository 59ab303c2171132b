import { describe, expect, it } from 'vitest';
import { parsePointer, pointerMetadata } from '../src/snapshots/index.js';

describe('the snapshot pointer in offset-commit metadata', () => {
  it('round-trips, and no pointer is no metadata', () => {
    const p = { id: '5b1c-snap', from: 120, to: 123, pieces: 3 };
    expect(parsePointer(pointerMetadata(p))).toEqual(p);
    expect(pointerMetadata(null)).toBeNull();
    expect(parsePointer(null)).toBeNull();
    expect(parsePointer(undefined)).toBeNull();
  });

  it.each([
    ['empty metadata (a commit by kafkajs without a pointer)', ''],
    ['another version', 'lg-snapshot/2 1 2 1 id'],
    ['a missing field', 'lg-snapshot/1 1 2 1'],
    ['an extra field', 'lg-snapshot/1 1 2 1 id more'],
    ['a negative offset', 'lg-snapshot/1 -1 2 1 id'],
    ['a range that ends before it starts', 'lg-snapshot/1 5 4 1 id'],
    ['more pieces than offsets', 'lg-snapshot/1 5 6 3 id'],
    ['no pieces', 'lg-snapshot/1 5 6 0 id'],
    ['a fractional offset', 'lg-snapshot/1 1.5 2 1 id'],
    ['an offset beyond 2^53', 'lg-snapshot/1 1 9007199254740993 1 id'],
  ])('reads %s as no snapshot (the partition is folded instead)', (_, metadata) => {
    expect(parsePointer(metadata)).toBeNull();
  });
});
