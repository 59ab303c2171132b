/**
 * What a runs-topic writer knows of the records it appended itself and the fold has not passed
 * yet: their offsets (from the ack) and headers. When every record from the fold's position to the
 * end of a new batch is one of these, folding them onto the fold's heads (the batch rule is a pure
 * function of heads and headers) gives exactly what the fold will find, at the ack. Any other
 * record in between (another writer's, a failed append of ours, a transaction marker) leaves a
 * gap: "unknown", and the caller waits for the fold.
 */
import { EMPTY_HEAD, foldRunRecord, type RunHead } from './run-batch-fold.js';

/** A run's head with where its last counted record is. */
export interface PlacedHead extends RunHead {
  readonly offset: number;
}

/** Records this writer appended: offsets [from, to) of one partition, all of run `key`. */
export interface OwnSpan {
  readonly from: number;
  readonly to: number;
  readonly key: string;
  readonly headers: readonly Readonly<Record<string, string>>[];
}

export interface Prediction {
  /** The heads of the runs whose records were folded on, as the fold will have them at `last`. */
  readonly heads: ReadonlyMap<string, PlacedHead>;
  /** How many of the batch's records at or after the fold's position count. */
  readonly counted: number;
}

export class OwnRecords {
  /** Per partition, in offset order. */
  private readonly spans = new Map<number, OwnSpan[]>();

  remember(partition: number, span: OwnSpan): void {
    const spans = this.spans.get(partition) ?? [];
    this.spans.set(partition, spans);
    // Acks come back in offset order (one produce request in flight): nearly always a push.
    let i = spans.length;
    while (i > 0 && (spans[i - 1] as OwnSpan).from > span.from) i--;
    spans.splice(i, 0, span);
  }

  /**
   * What the fold will find for `batch` (its last record at `last` of `partition`), the fold
   * having folded every record below `position` into `folded`; undefined when a record in
   * between is not known here, or the fold has passed `last` already (its own count answers).
   */
  predict(
    partition: number,
    position: number,
    folded: (key: string) => PlacedHead | undefined,
    batch: string,
    last: number,
  ): Prediction | undefined {
    const spans = this.spans.get(partition) ?? [];
    while (spans.length > 0 && (spans[0] as OwnSpan).to <= position) spans.shift();
    if (position > last) return undefined;
    const heads = new Map<string, PlacedHead>();
    let at = position;
    let counted = 0;
    for (const span of spans) {
      if (at > last) break;
      if (span.from > at) return undefined;
      for (let offset = Math.max(span.from, at); offset < span.to; offset++) {
        const before = heads.get(span.key) ?? folded(span.key) ?? { ...EMPTY_HEAD, offset: -1 };
        const next = foldRunRecord(before, span.headers[offset - span.from]);
        if (next === null) continue;
        heads.set(span.key, { ...next, offset });
        if (next.batch === batch) counted++;
      }
      at = span.to;
    }
    return at > last ? { heads, counted } : undefined;
  }
}
