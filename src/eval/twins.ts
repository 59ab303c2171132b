/**
 * Twin stops: a stop on a failed run that no rule could have made without also stopping a
 * successful run. A detector decides on call `k` from the calls before it with their results and
 * call `k` as requested; when a successful run of the same source is identical through call `k`
 * and was stopped at `k` too, the calls saved on the failed run were paid for with a false stop
 * (luck, not judgement: a synthetic stuck run begins with a working run cut short). Counted per
 * source and detector, only where the twin was actually stopped at the same call.
 */
import type { TraceCall, TraceRun } from '../trace/trace-run.js';
import type { Verdict } from './detector.js';
import { canonicalJson } from './identity.js';

/** What a call's result adds to what the guard sees; left out of the call being requested. */
const RESULT_FIELDS: ReadonlySet<string> = new Set([
  'result',
  'result_sha256',
  'result_len',
  'kind',
  'code',
  'retry_after_ms',
  'cost_usd',
  'tokens',
  'judgement',
]);

/** A call as the detector saw it: `step` is its position, already part of the prefix. */
function seen(call: TraceCall, requestOnly: boolean): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(call).filter(([k]) => k !== 'step' && !(requestOnly && RESULT_FIELDS.has(k))),
  );
}

/**
 * Everything a detector could base its decision on call `index` on: the run's task type (it
 * selects the policy's profile), every earlier call with its result, and call `index` without one.
 */
export function prefixKey(run: TraceRun, index: number): string {
  const calls = run.calls.slice(0, index).map((c) => seen(c, false));
  const asked = run.calls[index];
  return canonicalJson({
    taskType: run.task_type ?? null,
    calls,
    asked: asked === undefined ? null : seen(asked, true),
  });
}

/**
 * For each run, whether its verdict is a twin stop: the run failed, it was stopped at `k`, and a
 * successful run of the same runs, identical through call `k`, was stopped at `k` as well.
 */
export function twinStops(runs: readonly TraceRun[], verdicts: readonly Verdict[]): boolean[] {
  const falseStops = new Set<string>();
  runs.forEach((run, i) => {
    const stop = verdicts[i]?.stopIndex;
    if (run.outcome.success === true && stop != null) falseStops.add(prefixKey(run, stop));
  });
  return runs.map((run, i) => {
    const stop = verdicts[i]?.stopIndex;
    if (falseStops.size === 0 || run.outcome.success !== false || stop == null) return false;
    return falseStops.has(prefixKey(run, stop));
  });
}
