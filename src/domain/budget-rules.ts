import { spentBudget } from './family.js';
import type { RunPolicy } from './policy.js';
import type { RunState } from './run-state.js';
import { evidence, stopVerdict, type Verdict } from './verdict.js';

/** The run's own budgets; `s` counts what it and all its sub-agents have used (see `checkBefore`). */
export function budgets(s: RunState, p: RunPolicy, atMs: number): Verdict | null {
  const elapsed = atMs - s.startedAtMs;
  // Checked without allocating: this runs before every call, and a budget is rarely spent.
  if (p.maxWallClockMs !== null && elapsed >= p.maxWallClockMs)
    return spent(s, 'wall_clock_budget', 'wall-clock', elapsed, p.maxWallClockMs, elapsed);
  const budget = spentBudget(p, s);
  if (budget === null) return null;
  const [rule, what, used, limit] = budget;
  if (rule !== 'cost_budget') return spent(s, rule, what, used, limit, elapsed);
  return stopVerdict(
    'before',
    rule,
    `Stopped: the cost budget is spent ($${used} of $${limit}).`,
    evidence(
      [],
      { steps: s.steps, toolCalls: s.toolCalls, tokens: s.tokens, elapsedMs: elapsed },
      { limit, used },
    ),
  );
}

function spent(
  s: RunState,
  rule: string,
  what: string,
  used: number,
  limit: number,
  elapsed: number,
): Verdict {
  return stopVerdict(
    'before',
    rule,
    `Stopped: the ${what} budget is spent (${used} of ${limit}). Give your final answer with what you have.`,
    evidence(
      [],
      { steps: s.steps, toolCalls: s.toolCalls, tokens: s.tokens, elapsedMs: elapsed, used },
      { limit },
    ),
  );
}
