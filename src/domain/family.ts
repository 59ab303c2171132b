import { isTerminal, type RunStatus } from './events.js';
import type { Limits } from './policy.js';
import { evidence, stopVerdict, type Verdict } from './verdict.js';

/**
 * Supervisors and sub-agents: a run started with a parent counts its steps, tokens and cost
 * against every ancestor's budgets too, and ends when an ancestor has ended. Each run's stream
 * stays its own (one writer per run); what the decider needs to know about the rest of the tree
 * arrives with the command, as the ledger's view does, and what it decided is recorded.
 */

/** What a subtree of runs has used: the run itself and all its descendants. */
export interface TreeSpend {
  readonly steps: number;
  readonly toolCalls: number;
  readonly tokens: number;
  readonly costUsd: number;
}

export interface AncestorView {
  readonly runId: string;
  readonly status: RunStatus;
  /** The budgets of the ancestor's own policy. */
  readonly limits: Pick<Limits, 'maxSteps' | 'maxToolCalls' | 'maxTokens' | 'maxCostUsd'>;
  /** What the ancestor's whole subtree (it, this run and every other descendant) has used. */
  readonly spent: TreeSpend;
}

export interface ChildState {
  readonly runId: string;
  readonly state: RunStatus;
}

/** The run's place in its tree, as the runtime sees it when a command is given. */
export interface FamilyView {
  /** What this run's descendants have used, counted against its own budgets. */
  readonly below: TreeSpend;
  /** Parent first, then its parent, up to the root. */
  readonly ancestors: readonly AncestorView[];
  readonly children: readonly ChildState[];
}

export const NO_SPEND: TreeSpend = { steps: 0, toolCalls: 0, tokens: 0, costUsd: 0 };

/** A run's own use (or a subtree's) plus its descendants'. */
export function treeSpend(s: TreeSpend, below: TreeSpend = NO_SPEND): TreeSpend {
  return {
    steps: s.steps + below.steps,
    toolCalls: s.toolCalls + below.toolCalls,
    tokens: s.tokens + below.tokens,
    costUsd: s.costUsd + below.costUsd,
  };
}

const counts = (t: TreeSpend): Record<string, number> => ({
  steps: t.steps,
  toolCalls: t.toolCalls,
  tokens: t.tokens,
  costUsd: t.costUsd,
});

/**
 * The first budget of `limits` that `used` has reached, as [rule, what, used, limit]: one order and
 * one set of rule names for a run's own budgets, its ancestors' and a resume's.
 */
export function spentBudget(
  limits: AncestorView['limits'],
  used: TreeSpend,
): readonly [string, string, number, number] | null {
  if (limits.maxSteps !== null && used.steps >= limits.maxSteps)
    return ['step_budget', 'step', used.steps, limits.maxSteps];
  if (limits.maxToolCalls !== null && used.toolCalls >= limits.maxToolCalls)
    return ['tool_call_budget', 'tool-call', used.toolCalls, limits.maxToolCalls];
  if (limits.maxTokens !== null && used.tokens >= limits.maxTokens)
    return ['token_budget', 'token', used.tokens, limits.maxTokens];
  if (limits.maxCostUsd !== null && used.costUsd >= limits.maxCostUsd)
    return ['cost_budget', 'cost', used.costUsd, limits.maxCostUsd];
  return null;
}

/** Before a call of a sub-agent: an ended ancestor ends it; a spent ancestor budget stops it. */
export function ancestorVerdict(
  family: FamilyView | undefined,
  costEstimateUsd: number | null,
): Verdict | null {
  for (const a of family?.ancestors ?? []) {
    if (isTerminal(a.status)) {
      return stopVerdict(
        'before',
        'parent_stopped',
        `Stopped: ancestor run ${a.runId} has ended (${a.status}); no call of its sub-agents runs after it.`,
        evidence([], counts(a.spent), {}),
        'PARTIAL',
      );
    }
    const spent = spentBudget(a.limits, a.spent);
    if (spent !== null) {
      const [rule, what, used, limit] = spent;
      return stopVerdict(
        'before',
        rule,
        `Stopped: the ${what} budget of ancestor run ${a.runId} is spent (${used} of ${limit}, counting all its sub-agents). Give your final answer with what you have.`,
        evidence([], counts(a.spent), { limit }),
      );
    }
    const max = a.limits.maxCostUsd;
    if (max !== null && costEstimateUsd !== null && a.spent.costUsd + costEstimateUsd > max) {
      return {
        decision: 'refuse',
        rule: 'cost_estimate',
        message: `Refused: the call is estimated at $${costEstimateUsd} but ancestor run ${a.runId} has only $${(max - a.spent.costUsd).toFixed(4)} left. Choose a cheaper step or finish.`,
        evidence: evidence([], counts(a.spent), { estimateUsd: costEstimateUsd, maxCostUsd: max }),
      };
    }
  }
  return null;
}
