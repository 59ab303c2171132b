import {
  initialState,
  type RecordedEvent,
  type RunState,
  type TreeSpend,
  treeSpend,
} from '../domain/index.js';
import { foldRun } from '../machines/index.js';
import { type AuditEntry, AuditProjection } from './audit-projection.js';
import { type LedgerEntry, LedgerProjection } from './ledger-projection.js';

/** What a run had spent at one moment: one point of the "budgets over time" view. */
export interface BudgetPoint extends TreeSpend {
  readonly atMs: number;
}

/** Everything a person looks at for one run: calls and decisions, budgets over time, ledger, stop. */
export interface RunTimeline {
  readonly runId: string;
  readonly state: RunState;
  readonly entries: readonly AuditEntry[];
  readonly budgets: readonly BudgetPoint[];
  /** The operations this run claimed, with where each stands. */
  readonly ledger: readonly LedgerEntry[];
}

/**
 * Folds one run's events into its timeline. Fed the whole log, it keeps only `runId`'s events, so
 * a page for one run costs one pass and the memory of that run alone.
 */
export class RunTimelineFold {
  private state: RunState;
  private readonly audit = new AuditProjection();
  private readonly ledger = new LedgerProjection();
  private readonly budgets: BudgetPoint[] = [];

  constructor(readonly runId: string) {
    this.state = initialState(runId);
  }

  apply(rec: RecordedEvent): void {
    if (rec.runId !== this.runId || rec.seq <= this.state.seq) return;
    const before = this.state;
    this.state = foldRun(before, rec);
    this.audit.apply(rec);
    this.ledger.apply(rec);
    const s = this.state;
    if (
      this.budgets.length === 0 ||
      s.steps !== before.steps ||
      s.toolCalls !== before.toolCalls ||
      s.tokens !== before.tokens ||
      s.costUsd !== before.costUsd
    )
      this.budgets.push({ atMs: rec.atMs, ...treeSpend(s) });
  }

  /** The timeline, or undefined when the log has no event of this run. */
  timeline(): RunTimeline | undefined {
    if (this.state.seq === 0) return undefined;
    return {
      runId: this.runId,
      state: this.state,
      entries: this.audit.timeline(this.runId) ?? [],
      budgets: this.budgets,
      ledger: Object.values(this.ledger.snapshot()),
    };
  }
}
