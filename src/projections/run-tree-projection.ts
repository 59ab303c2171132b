import type { RecordedEvent, RunStatus } from '../domain/index.js';
import type { RunsProjection } from './runs-projection.js';

/** A run, its state, and its sub-agents, recursively. */
export interface RunTreeNode {
  readonly runId: string;
  readonly state: RunStatus;
  readonly children: readonly RunTreeNode[];
}

/**
 * Supervisors and their sub-agents, from the parent link each RunStarted carries: a rebuild from
 * the log gives the same tree as the live runs. States come from the runs projection.
 */
export class RunTreeProjection {
  private readonly children = new Map<string, string[]>();

  constructor(private readonly runs: RunsProjection) {}

  apply(rec: RecordedEvent): void {
    const e = rec.event;
    if (e.type !== 'RunStarted' || e.parentRunId === null) return;
    const siblings = this.children.get(e.parentRunId) ?? [];
    if (!siblings.includes(e.runId)) siblings.push(e.runId);
    this.children.set(e.parentRunId, siblings);
  }

  private parentOf(runId: string): string | null {
    return this.runs.get(runId)?.parentRunId ?? null;
  }

  /** The whole tree `runId` belongs to, from its root; undefined for a run not in the log. */
  of(runId: string): RunTreeNode | undefined {
    if (this.runs.get(runId) === undefined) return undefined;
    let root = runId;
    const seen = new Set([root]);
    for (let p = this.parentOf(root); p !== null && !seen.has(p); p = this.parentOf(p)) {
      seen.add(p);
      root = p;
    }
    return this.node(root, new Set());
  }

  private node(runId: string, visiting: Set<string>): RunTreeNode {
    visiting.add(runId);
    const kids = (this.children.get(runId) ?? []).filter((c) => !visiting.has(c));
    return {
      runId,
      state: this.runs.get(runId)?.status ?? 'NEW',
      children: kids.map((c) => this.node(c, visiting)),
    };
  }

  snapshot(): Record<string, readonly string[]> {
    return Object.fromEntries(this.children);
  }
}
