import {
  IllegalStateError,
  initialState,
  isTerminal,
  type RecordedEvent,
  type RunState,
  type RunStatus,
} from '../domain/index.js';
import { foldRun } from '../machines/index.js';
import { RunSummaryFold } from '../projections/index.js';
import { type RunListRow, runListRow } from './run-list-page.js';

/**
 * The run list folded from the runs topic (the rows runListRows gives for a full RunsProjection),
 * in memory that does not grow with a run's events: each run is its row and its summary's tally;
 * only a live run also keeps its state (a waiting run's status depends on its calls). A resumed
 * run's state is taken up again from its row: nothing else of an ended run bears on a row after a
 * resume (RunResumed starts the run's window afresh).
 *
 * At most `maxLive` states are kept, the runs touched last; a run whose state was dropped is
 * `evicted`, and before its next event its state is folded again from its own earlier events
 * (`restore`): what the machine would say, never a guess.
 */
export class RunListFold {
  private readonly summaries = new RunSummaryFold();
  private readonly byRun = new Map<string, RunListRow>();
  /** Live runs' states, the one touched last at the end. */
  private readonly live = new Map<string, RunState>();
  private readonly dropped = new Set<string>();

  constructor(private readonly maxLive = Number.POSITIVE_INFINITY) {}

  /** Whether `runId` is live with its state dropped: `restore` it before applying its next event. */
  evicted(runId: string): boolean {
    return this.dropped.has(runId);
  }

  /** Takes up an evicted run's state from its events before the next one to apply, in seq order. */
  restore(runId: string, earlier: readonly RecordedEvent[]): void {
    let s = initialState(runId);
    for (const e of earlier) s = foldRun(s, e);
    this.dropped.delete(runId);
    this.keep(runId, s);
  }

  apply(rec: RecordedEvent): void {
    const id = rec.runId;
    if (this.dropped.has(id))
      throw new IllegalStateError(
        'state_dropped',
        `run ${id}: its state was dropped (more than ${this.maxLive} live runs); restore it before applying seq ${rec.seq}`,
      );
    this.summaries.apply(rec);
    const row = this.byRun.get(id);
    const before =
      this.live.get(id) ??
      (row === undefined
        ? initialState(id)
        : {
            ...initialState(id),
            status: row.state as RunStatus,
            tenant: row.tenant,
            taskType: row.taskType,
          });
    const s = foldRun(before, rec);
    if (isTerminal(s.status)) this.live.delete(id);
    else this.keep(id, s);
    // A Map keeps a key's first place when it is set again: the rows stay in order of first appearance.
    this.byRun.set(id, runListRow(id, s, this.summaries.summary(id)));
  }

  /** Every run's row, in the order runs first appeared in the log. */
  rows(): RunListRow[] {
    return [...this.byRun.values()];
  }

  /** Runs whose state is kept (live, not evicted). */
  get liveRuns(): number {
    return this.live.size;
  }

  private keep(id: string, s: RunState): void {
    this.live.delete(id);
    this.live.set(id, s);
    if (this.live.size <= this.maxLive) return;
    const oldest = this.live.keys().next().value as string;
    this.live.delete(oldest);
    this.dropped.add(oldest);
  }
}
