import type { RecordedEvent } from '../domain/index.js';
import { RunListFold } from './run-list-fold.js';
import type { RunFilters, RunListRow } from './run-list-page.js';

/** A filtered page of the run list: how many runs there are and match, and the page's runs' events. */
export interface FilteredRunEvents {
  readonly total: number;
  readonly matching: number;
  readonly runs: readonly (readonly RecordedEvent[])[];
}

/** Where the run list comes from: the runs topic read from an offset, or, where offsets are per partition (Kafka), a full scan. */
export interface RunListSource {
  /** The runs topic's events from `offset` on, each with its offset; undefined where there is no single offset. */
  readonly entries?: (
    offset: number,
  ) => AsyncIterable<{ readonly offset: number; readonly event: RecordedEvent }>;
  /** Every event of the runs topic; `apply` throwing ends the scan (rejecting with what it threw). */
  scan(apply: (rec: RecordedEvent) => void): Promise<number>;
  /**
   * The store's run index (embedded): runs in order of first appearance a page at a time, and one
   * run's own events, each without reading the log.
   */
  readonly runs?: {
    page(
      offset: number,
      limit: number,
    ): Promise<{ readonly total: number; readonly runIds: readonly string[] }>;
    events(runId: string): Promise<readonly RecordedEvent[]>;
    /**
     * The runs that match the filters, a page of them, from the store's run rows, each with its
     * events; null when the rows are not the log's (none yet, or behind it).
     */
    filtered?(filters: RunFilters, offset: number, limit: number): Promise<FilteredRunEvents | null>;
  };
}

/** Live run states the index keeps where it can read a run's events again (the run index). */
export const LIVE_STATES_KEPT = 1000;

/** Raised inside a fold to end it early: the client that asked went away. */
export class Abandoned extends Error {}

interface SharedFold {
  /** How many readers wait for it: none left, the scan stops. */
  readonly waiting: { readers: number };
  readonly done: Promise<RunListRow[]>;
}

/**
 * The run list for filtered pages (an unfiltered one is read from the store's run index), kept in
 * a RunListFold (at most LIVE_STATES_KEPT live states where the source can read a run again). Each
 * page reads only what was appended since the last one, so it costs the new events, not the whole
 * log. Readers arriving during a catch-up share it; one whose client left stops waiting (and, if it
 * was the one reading, stops at the record it reached: the next reader goes on from there). Without
 * offsets (Kafka) every page scans the log afresh, one scan shared by the readers that arrive while
 * it runs and stopped once every one of them left.
 */
export class RunListIndex {
  private readonly fold: RunListFold;
  private next = 0;
  private catching: Promise<void> | null = null;
  private scanning: SharedFold | null = null;
  private cached: { readonly at: number; readonly rows: RunListRow[] } | null = null;

  constructor(private readonly source: RunListSource) {
    this.fold = new RunListFold(source.runs === undefined ? Number.POSITIVE_INFINITY : LIVE_STATES_KEPT);
  }

  /** Every run's row, in the order runs first appeared in the log, as of now. */
  async rows(signal: AbortSignal): Promise<RunListRow[]> {
    const entries = this.source.entries;
    if (entries === undefined) return this.scanned(signal);
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
    if (this.cached?.at !== this.next) this.cached = { at: this.next, rows: this.fold.rows() };
    return this.cached.rows;
  }

  private async catchUp(entries: NonNullable<RunListSource['entries']>, signal: AbortSignal): Promise<void> {
    for await (const { offset, event } of entries(this.next)) {
      if (this.fold.evicted(event.runId)) {
        const all = (await this.source.runs?.events(event.runId)) ?? [];
        this.fold.restore(
          event.runId,
          all.filter((e) => e.seq < event.seq),
        );
      }
      this.fold.apply(event);
      this.next = offset + 1;
      if (signal.aborted) throw new Abandoned('the client went away');
    }
  }

  private async scanned(signal: AbortSignal): Promise<RunListRow[]> {
    for (;;) {
      let shared = this.scanning;
      if (shared === null) shared = this.startScan();
      else shared.waiting.readers++;
      try {
        return await abandonable(shared.done, signal);
      } catch (e) {
        // Every reader of that scan left just before this one came: this one starts another.
        if (e instanceof Abandoned && !signal.aborted) continue;
        throw e;
      } finally {
        shared.waiting.readers--;
      }
    }
  }

  /** A scan with its first reader (the caller) waiting for it. */
  private startScan(): SharedFold {
    const fold = new RunListFold();
    // Counted before the scan starts: a source may apply its first records before it returns.
    const waiting = { readers: 1 };
    const done = this.source
      .scan((rec) => {
        if (waiting.readers === 0) throw new Abandoned('every client that asked went away');
        fold.apply(rec);
      })
      .then(() => fold.rows())
      .finally(() => {
        if (this.scanning === s) this.scanning = null;
      });
    done.catch(() => undefined);
    const s: SharedFold = { waiting, done };
    this.scanning = s;
    return s;
  }
}

function abandonable<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new Abandoned('the client went away'));
  return new Promise<T>((resolve, reject) => {
    const leave = () => reject(new Abandoned('the client went away'));
    signal.addEventListener('abort', leave, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', leave));
  });
}
