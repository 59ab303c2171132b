import type { TraceRun } from '../../trace/trace-run.js';
import { type Detector, NO_STOP, startsNewUserTurn, type Verdict } from '../detector.js';

/**
 * A plain step/turn budget, the shared mechanics of the framework caps in this folder.
 *
 * Mapping from a framework "turn"/"step"/"iteration" to a trace of tool calls: each of these
 * frameworks counts model invocations; a model invocation that asks for a tool is followed by the
 * tool running and by another invocation. The recorded agents issue one tool call per model turn, so
 * model turn k (1-based) produced call k-1, and a cap of N lets N calls run: the (N+1)-th model
 * invocation is refused, so the first call that does not run is index N.
 *
 * Caveats, documented rather than modelled:
 * - the turn that writes the final text answer also counts in these frameworks; the traces record it
 *   only when it is a tool call (ReAct `finish[...]`, ToolBench `Finish`), so a text-only final turn
 *   right after call N-1 would also hit the cap; that stop is invisible here (no call is lost), which
 *   flatters the caps slightly;
 * - the counter restarts with each new user message (a new Runner.run / generate call), see
 *   `startsNewUserTurn`; only tau-bench has user replies between calls.
 */
export function stepCap(name: string, rule: string, maxCalls: number): Detector {
  if (!Number.isInteger(maxCalls) || maxCalls < 1)
    throw new RangeError(`maxCalls must be >= 1, got ${maxCalls}`);
  return {
    name,
    judge(run: TraceRun): Verdict {
      let used = 0;
      for (let i = 0; i < run.calls.length; i++) {
        if (startsNewUserTurn(run, i)) used = 0;
        if (used === maxCalls) return { stopIndex: i, rule };
        used++;
      }
      return NO_STOP;
    },
  };
}
