import type { RecordedEvent, RunState } from '../domain/index.js';

/**
 * A fold that remembers its answers for one proposal: the decider folds a call's result to judge
 * it, and the actor then folds the same event onto the same state. Keyed by the identity of the
 * state and the event and by the record's seq and time (all a fold reads), so a hit is the very
 * answer `fold` gives; fold answers are never mutated, so sharing one is safe.
 */
export function foldMemo<T>(
  fold: (s: RunState, rec: RecordedEvent) => T,
): (s: RunState, rec: RecordedEvent) => T {
  const known: { s: RunState; rec: RecordedEvent; next: T }[] = [];
  return (s, rec) => {
    for (const k of known)
      if (k.s === s && k.rec.event === rec.event && k.rec.seq === rec.seq && k.rec.atMs === rec.atMs)
        return k.next;
    const next = fold(s, rec);
    known.push({ s, rec, next });
    return next;
  };
}
