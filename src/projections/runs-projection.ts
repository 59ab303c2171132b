import { initialState, type RecordedEvent, type RunState } from '../domain/index.js';
import { foldRun } from '../machines/index.js';
import { type RunSummary, RunSummaryFold } from './run-summary.js';

/**
 * run id -> state, counters, spend, terminal state and stop report. The state is the run machine's
 * fold (its status the machine's), so a rebuilt run is the live run, bit for bit.
 */
export class RunsProjection {
  private readonly states = new Map<string, RunState>();
  private readonly summaries = new RunSummaryFold();

  apply(rec: RecordedEvent): void {
    this.states.set(rec.runId, foldRun(this.states.get(rec.runId) ?? initialState(rec.runId), rec));
    this.summaries.apply(rec);
  }

  get(runId: string): RunState | undefined {
    return this.states.get(runId);
  }

  summary(runId: string): RunSummary | undefined {
    return this.summaries.summary(runId);
  }

  /** Summaries in the order runs first appeared in the log. */
  allSummaries(): RunSummary[] {
    return this.summaries.runIds().flatMap((id) => this.summaries.summary(id) ?? []);
  }

  snapshot(): Record<string, RunState> {
    return Object.fromEntries(this.states);
  }
}
