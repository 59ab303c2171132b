import {
  type AncestorView,
  type ChildState,
  type FamilyView,
  isTerminal,
  NO_SPEND,
  type RunState,
  type TerminalState,
  type TreeSpend,
  treeSpend,
} from '../domain/index.js';
import type { CommandInput } from '../machines/index.js';

/** What the family needs of a run: its state, and a way to end it with its ended parent. */
export interface FamilyMember {
  readonly runId: string;
  readonly state: RunState;
  endWithParent(parentRunId: string, parentState: TerminalState): Promise<void>;
}

/**
 * The supervisor/sub-agent tree of the runs one guard holds. It gives each command the run's
 * place in the tree (what its sub-agents spent, its ancestors' budgets and states, its children)
 * and, when a run ends, ends its live descendants: no call of theirs executes after.
 */
export class RunFamily {
  private readonly members = new Map<string, FamilyMember>();
  private readonly kids = new Map<string, string[]>();

  add(member: FamilyMember): void {
    this.members.set(member.runId, member);
    const parent = member.state.parentRunId;
    if (parent === null) return;
    const siblings = this.kids.get(parent) ?? [];
    if (!siblings.includes(member.runId)) siblings.push(member.runId);
    this.kids.set(parent, siblings);
  }

  /** The run of this id in the tree, held or loaded as a relative. */
  member(runId: string): FamilyMember | undefined {
    return this.members.get(runId);
  }

  private children(runId: string): FamilyMember[] {
    return (this.kids.get(runId) ?? []).flatMap((id) => this.members.get(id) ?? []);
  }

  /** What every descendant of `runId` has used. */
  private below(runId: string, visiting = new Set<string>()): TreeSpend {
    visiting.add(runId);
    let sum = NO_SPEND;
    for (const c of this.children(runId)) {
      if (visiting.has(c.runId)) continue;
      sum = treeSpend(sum, treeSpend(c.state, this.below(c.runId, visiting)));
    }
    return sum;
  }

  /** The run's place in the tree; undefined for a run with neither parent nor children. */
  view(runId: string): FamilyView | undefined {
    const self = this.members.get(runId);
    const children = this.children(runId);
    if (self === undefined || (self.state.parentRunId === null && children.length === 0)) return undefined;
    const ancestors: AncestorView[] = [];
    const seen = new Set([runId]);
    for (let p = self.state.parentRunId; p !== null && !seen.has(p); ) {
      seen.add(p);
      const a = this.members.get(p);
      if (a === undefined) break;
      const policy = a.state.policy;
      ancestors.push({
        runId: p,
        status: a.state.status,
        limits: {
          maxSteps: policy?.maxSteps ?? null,
          maxToolCalls: policy?.maxToolCalls ?? null,
          maxTokens: policy?.maxTokens ?? null,
          maxCostUsd: policy?.maxCostUsd ?? null,
        },
        spent: treeSpend(a.state, this.below(p)),
      });
      p = a.state.parentRunId;
    }
    const kids: ChildState[] = children.map((c) => ({ runId: c.runId, state: c.state.status }));
    return { below: this.below(runId), ancestors, children: kids };
  }

  /** Ends the live children of a run that has ended; each, ending, does the same for its own. */
  async ended(runId: string): Promise<void> {
    const status = this.members.get(runId)?.state.status;
    if (status === undefined || !isTerminal(status)) return;
    for (const child of this.children(runId)) {
      if (!isTerminal(child.state.status)) await child.endWithParent(runId, status);
    }
  }
}

/** The command with the run's place in its tree of supervisors and sub-agents, if it has one. */
export function withFamily(cmd: CommandInput, view: FamilyView | undefined): CommandInput {
  if (view === undefined) return cmd;
  switch (cmd.type) {
    case 'RequestToolCall':
    case 'CompleteToolCall':
      return { ...cmd, family: view };
    case 'Finish':
    case 'Cancel':
    case 'Fail':
    case 'EndWithParent':
      return { ...cmd, children: view.children };
    default:
      return cmd;
  }
}
