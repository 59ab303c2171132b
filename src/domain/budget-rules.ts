import type { RunPolicy } from './policy.js';
import type { RunState } from './run-state.js';
import { evidence, stopVerdict, type Verdict } from './verdict.js';

/** The run's own budgets; `s` counts what it and all its sub-agents have used (see `checkBefore`). */
export function budgets(s: RunState, p: RunPolicy, atMs: number): Verdict | null {
  const elapsed = atMs - s.startedAtMs;
  // Checked without allocating: this runs before every call, and a budget is rarely spent.
  if (p.maxWallClockMs !== null && elapsed >= p.maxWallClockMs)
    return spent(s, 'wall_clock_budget', 'wall-clock', elapsed, p.maxWallClockMs, elapsed);
  if (p.maxSteps !== null && s.steps >= p.maxSteps)
    return spent(s, 'step_budget', 'step', s.steps, p.maxSteps, elapsed);
  if (p.maxToolCalls !== null && s.toolCalls >= p.maxToolCalls)
    return spent(s, 'tool_call_budget', 'tool-call', s.toolCalls, p.maxToolCalls, elapsed);
  if (p.maxTokens !== null && s.tokens >= p.maxTokens)
    return spent(s, 'token_budget', 'token', s.tokens, p.maxTokens, elapsed);
  if (p.maxCostUsd !== null && s.costUsd >= p.maxCostUsd) {
    return stopVerdict(
      'before',
      'cost_budget',
      `Stopped: the cost budget is spent ($${s.costUsd} of $${p.maxCostUsd}).`,
      evidence(
        [],
        { steps: s.steps, toolCalls: s.toolCalls, tokens: s.tokens, elapsedMs: elapsed },
        { limit: p.maxCostUsd, used: s.costUsd },
      ),
    );
  }
  return null;
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
