import {
  initialState,
  isTerminal,
  type RecordedEvent,
  type RunState,
  type RunStatus,
} from '../domain/index.js';
import { foldRun } from '../machines/index.js';
import { RunSummaryFold } from '../projections/index.js';
import type { RunListRow } from './run-list-page.js';

/**
 * The run list folded from the runs topic, in memory that does not grow with a run's events: each
 * run is its row and its summary's tally; only a live run also keeps its state (the status of a
 * waiting run depends on its calls). An ended run's state goes with its stop: were it resumed,
 * its state is taken up again from the row, since nothing of an ended run but its status, tenant
 * and task type bears on a row after a resume (RunResumed starts the run's window afresh).
 * Gives the rows runListRows gives for a full RunsProjection (run-list-fold tests).
 */
export class RunListFold {
  private readonly summaries = new RunSummaryFold();
  private readonly byRun = new Map<string, RunListRow>();
  private readonly live = new Map<string, RunState>();

  apply(rec: RecordedEvent): void {
    const id = rec.runId;
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
    else this.live.set(id, s);
    const sum = this.summaries.summary(id);
    // A Map keeps a key's first place when it is set again: the rows stay in order of first appearance.
    this.byRun.set(id, {
      runId: id,
      state: s.status,
      rule: sum?.rule ?? null,
      tenant: s.tenant,
      taskType: s.taskType,
      stopStep: sum?.stop_step ?? null,
      executed: sum?.calls_executed ?? 0,
      total: sum?.calls_total ?? 0,
    });
  }

  /** Every run's row, in the order runs first appeared in the log. */
  rows(): RunListRow[] {
    return [...this.byRun.values()];
  }

  /** Runs whose state is kept (not ended). */
  get liveRuns(): number {
    return this.live.size;
  }
}
