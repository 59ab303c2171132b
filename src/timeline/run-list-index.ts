import type { RecordedEvent } from '../domain/index.js';
import { type Projections, RunsProjection } from '../projections/index.js';
import { type RunListRow, runListRows } from './run-list-page.js';

/** Where the run list comes from: the runs topic read from an offset, or, where offsets are per partition (Kafka), a full fold. */
export interface RunListSource {
  /** The runs topic's events from `offset` on, each with its offset; undefined where there is no single offset. */
  readonly entries?: (
    offset: number,
  ) => AsyncIterable<{ readonly offset: number; readonly event: RecordedEvent }>;
  rebuild(): Promise<Projections>;
}

/** Raised inside a fold to end it early: the client that asked went away. */
export class Abandoned extends Error {}

/**
 * The run list, kept: each page reads only what was appended since the last one (from the runs
 * offset it reached), so a list page costs the new events, not the whole log. Readers arriving
 * while it catches up share that one catch-up; one whose client left stops waiting (and, if it
 * was the one reading, stops the reading at the record it reached: the next reader goes on from
 * there). Without offsets (Kafka) every page folds the log afresh, one fold shared by the readers
 * that arrive while it runs.
 */
export class RunListIndex {
  private readonly runs = new RunsProjection();
  private next = 0;
  private catching: Promise<void> | null = null;
  private folding: Promise<RunListRow[]> | null = null;
  private cached: { readonly at: number; readonly rows: RunListRow[] } | null = null;

  constructor(private readonly source: RunListSource) {}

  /** Every run's row, in the order runs first appeared in the log, as of now. */
  async rows(signal: AbortSignal): Promise<RunListRow[]> {
    const entries = this.source.entries;
    if (entries === undefined) {
      this.folding ??= this.source.rebuild().then(
        (p) => {
          this.folding = null;
          return runListRows(p);
        },
        (e: unknown) => {
          this.folding = null;
          throw e;
        },
      );
      return abandonable(this.folding, signal);
    }
    // Another reader's catch-up: wait for it (its failure, or its client leaving, is its own), then read on.
    while (this.catching !== null)
      await abandonable(
        this.catching.catch(() => undefined),
        signal,
      );
    this.catching = this.catchUp(entries, signal).finally(() => {
      this.catching = null;
    });
    await this.catching;
    if (this.cached?.at !== this.next)
      this.cached = { at: this.next, rows: runListRows({ runs: this.runs }) };
    return this.cached.rows;
  }

  private async catchUp(entries: NonNullable<RunListSource['entries']>, signal: AbortSignal): Promise<void> {
    for await (const { offset, event } of entries(this.next)) {
      this.runs.apply(event);
      this.next = offset + 1;
      if (signal.aborted) throw new Abandoned('the client went away');
    }
  }
}

function abandonable<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new Abandoned('the client went away'));
  return new Promise<T>((resolve, reject) => {
    const leave = () => reject(new Abandoned('the client went away'));
    signal.addEventListener('abort', leave, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener('abort', leave);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', leave);
        reject(e);
      },
    );
  });
}
