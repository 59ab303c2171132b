import type { TraceCall } from '../../trace/trace-run.js';
import { type Detector, NO_STOP, nthInARow } from '../detector.js';

/**
 * Roo Code `ToolRepetitionDetector` (consecutive identical tool calls), default limit 3.
 *
 * Source: RooCodeInc/Roo-Code src/core/tools/ToolRepetitionDetector.ts and its spec
 * src/core/tools/__tests__/ToolRepetitionDetector.spec.ts; the limit comes from the provider setting
 * `consecutiveMistakeLimit`, default `DEFAULT_CONSECUTIVE_MISTAKE_LIMIT = 3` (packages/types).
 *
 * Behaviour reproduced exactly:
 * - `check()` runs BEFORE the tool executes; identity = JSON.stringify({name, parameters}) with the
 *   parameter keys sorted at the top level only (nested values keep their order);
 * - the counter is 0 on a new call, +1 on each identical consecutive call, and the call is refused
 *   when the counter reaches the limit. With limit 3 the first three identical calls run and the
 *   FOURTH consecutive identical call is blocked (spec: "should allow first 3 calls but block on the
 *   4th call for limit 3 (default)"), i.e. stopIndex = onset + 3. Results are not looked at;
 * - `browser_action` with action scroll_down / scroll_up is exempt and leaves the state untouched;
 * - a user turn between calls breaks consecutiveness (in Roo the agent's question to the user is
 *   itself a different tool call, ask_followup_question).
 */
function rooSerialize(call: TraceCall): string {
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(call.args).sort()) sorted[key] = call.args[key];
  return JSON.stringify({ name: call.tool, parameters: sorted });
}

function isBrowserScroll(call: TraceCall): boolean {
  const action = call.args.action;
  return call.tool === 'browser_action' && (action === 'scroll_down' || action === 'scroll_up');
}

export function rooCodeToolRepetition(limit = 3): Detector {
  return {
    name: `roo-code repetition limit=${limit}`,
    judge(run) {
      if (limit <= 0) return NO_STOP; // 0 (or negative) means unlimited in Roo Code
      // Roo's counter is 0 on a new call: the call refused at `limit` is the (limit + 1)-th in a row.
      return nthInARow(run, limit + 1, 'tool_repetition', (call) =>
        isBrowserScroll(call) ? null : rooSerialize(call),
      );
    },
  };
}
