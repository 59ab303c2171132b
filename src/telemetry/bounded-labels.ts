import { LOOP_RULES } from '../domain/index.js';

/**
 * Label values are a bounded set, whatever agents and servers name: a series per distinct value
 * is kept forever by Prometheus, so 7,000 tool names would be 7,000 series. Rules come from the
 * guard's own fixed set (a tool's error code can become a stop reason: it is not a rule label);
 * tools are kept by name up to a cap, the first ones seen, and every later name is `other`.
 */

/** The label for anything outside the fixed set, or past the cap. */
export const OTHER = 'other';

/** Every rule and stop reason the guard itself names (src/domain), plus "none". */
const GUARD_RULES: ReadonlySet<string> = new Set([
  'none',
  ...LOOP_RULES,
  'consecutive_same_tool',
  // budgets
  'step_budget',
  'tool_call_budget',
  'token_budget',
  'cost_budget',
  'wall_clock_budget',
  'tool_budget',
  'cost_estimate',
  // results and retries
  'retryable',
  'backoff',
  'retry_exhausted',
  'pending',
  'poll_exhausted',
  'precondition',
  'precondition_unchanged',
  'terminal_success',
  // side effects
  'idempotency',
  'in_doubt',
  'operation_in_flight',
  'side_effect_gate',
  // the run's end
  'run_stopped',
  'run_ended',
  'parent_stopped',
  'cancelled',
  'verified',
  'unverified',
  'failed',
  // a person decides
  'permission_denied',
  'policy_blocked',
  'needs_human',
  'invalid_result',
]);

/** A rule as a label: itself when the guard names it, else `other`. */
export const ruleLabel = (rule: string | null | undefined): string =>
  rule === null || rule === undefined || rule === '' ? 'none' : GUARD_RULES.has(rule) ? rule : OTHER;

/** Tool names kept as labels, per metrics registry. */
export const TOOL_LABEL_CAP = 200;

/** The first `cap` tool names seen keep their name; any later one is `other`. */
export class ToolLabels {
  private readonly kept = new Set<string>();

  constructor(private readonly cap = TOOL_LABEL_CAP) {}

  label(tool: string): string {
    if (this.kept.has(tool)) return tool;
    if (this.kept.size >= this.cap || tool === OTHER) return OTHER;
    this.kept.add(tool);
    return tool;
  }
}
