import {
  type DeciderDeps,
  errorOf,
  LoopguardError,
  ok,
  type Policy,
  type RecordedEvent,
  type Result,
  resolvePolicy,
  resultJsonOf,
} from '../domain/index.js';
import { type CommandInput, ManualClock, RunActor } from '../machines/index.js';
import { callIdForStep, type RunSummary, RunSummaryFold } from '../projections/run-summary.js';
import { decision } from '../runtime/call-result.js';
import type { TraceCall, TraceRun } from './trace-run.js';

export interface ReplayResult {
  readonly summary: RunSummary;
  /** Index into `run.calls` of the first call that did not run, or null. */
  readonly stopIndex: number | null;
  readonly events: readonly RecordedEvent[];
}

/** Without recorded times, a call follows the previous one by this much. */
const DEFAULT_GAP_MS = 1000;

/**
 * Offers each recorded call to the guard in order. Executed calls get their recorded result; the
 * first call the guard does not let run is recorded as refused and ends the replay. Deterministic:
 * time comes from the record (or a fixed gap), and a wait the guard asked for counts as kept when
 * the record has no times.
 */
export function replayRun(
  run: TraceRun,
  policy: Policy,
  deps: DeciderDeps,
  meta: Record<string, string> = {},
): ReplayResult {
  const clock = new ManualClock(run.calls[0]?.at_ms ?? 0);
  const actor = new RunActor(run.run_id, deps, clock);
  const events: RecordedEvent[] = [];
  /** Which call a refusal is about, so its message names the field (`calls[3].args.q`). */
  let at = '';
  const refused = (e: LoopguardError): LoopguardError =>
    errorOf(e.code, `${at}${e.message}`, {
      retriable: e.retriable,
      details: { ...e.details, field: `${at}${String(e.details.field ?? '')}` },
    });
  const step = (cmd: CommandInput): RecordedEvent[] => {
    const r = actor.propose(cmd);
    if (!r.ok) throw refused(r.error);
    actor.commit(r.value);
    events.push(...r.value);
    return r.value;
  };
  step({
    type: 'StartRun',
    runId: run.run_id,
    policy: resolvePolicy(policy, run.task_type),
    ...(run.task_type ? { taskType: run.task_type } : {}),
    ...(run.source ? { tenant: run.source } : {}),
    // The link is recorded, so the audit and a rebuild show the tree. Recorded runs are replayed
    // one after another, not interleaved as they ran, so ancestors' budgets are not applied here.
    ...(run.parent_run_id ? { parentRunId: run.parent_run_id } : {}),
    meta: { ...meta, calls_total: String(run.calls.length) },
  });
  let stopIndex: number | null = null;
  for (const [i, call] of run.calls.entries()) {
    at = `calls[${i}].`;
    const wait = actor.state.waitUntilMs;
    clock.set(call.at_ms ?? (i === 0 ? clock.now() : clock.now() + DEFAULT_GAP_MS));
    if (call.at_ms === undefined && wait !== null) clock.set(wait);
    const before = decision(step(request(call)), 'before');
    if (before.decision === 'return_cached_success') continue;
    if (before.decision !== 'execute') {
      stopIndex = i;
      break;
    }
    const done = completion(call, deps);
    if (!done.ok) throw refused(done.error);
    step(done.value);
  }
  at = '';
  if (actor.state.report === null) {
    // A refusal that did not end the run still ends the recording: the agent would have had to change course.
    const refused = stopIndex === null ? undefined : run.calls[stopIndex];
    if (refused !== undefined)
      step({ type: 'Cancel', reason: `replay ended: the guard refused step ${refused.step}` });
    else if (run.outcome.success === true) step({ type: 'Finish', verified: true });
    else if (run.outcome.success === false)
      step({ type: 'Fail', reason: run.outcome.detail ?? 'the recorded run failed' });
    else step({ type: 'Finish', verified: false, gaps: ['outcome unknown'] });
  }
  const fold = new RunSummaryFold();
  for (const e of events) fold.apply(e);
  const summary = fold.summary(run.run_id);
  if (summary === undefined) throw new LoopguardError('internal', `no summary for ${run.run_id}`);
  return { summary, stopIndex, events };
}

function request(call: TraceCall): CommandInput {
  return {
    type: 'RequestToolCall',
    callId: callIdForStep(call.step),
    tool: call.tool,
    args: call.args,
    afterUserTurn: call.after_user_turn,
    ...(call.operation_key !== undefined ? { operationKey: call.operation_key } : {}),
    ...(call.side_effect !== undefined ? { sideEffect: call.side_effect } : {}),
    ...(call.progress_version !== undefined ? { progressVersion: call.progress_version } : {}),
  };
}

function completion(call: TraceCall, deps: DeciderDeps): Result<CommandInput> {
  // The check every recorded result goes through: its size, and redaction.
  const recorded = resultJsonOf(call.result, deps.hashing);
  if (!recorded.ok) return recorded;
  return ok({
    type: 'CompleteToolCall',
    callId: callIdForStep(call.step),
    kind: call.kind ?? 'SUCCESS',
    resultHash: call.result_sha256,
    resultJson: recorded.value.json,
    ...(call.code !== undefined ? { code: call.code } : {}),
    ...(call.progress_version !== undefined ? { progressVersion: call.progress_version } : {}),
    ...(call.tokens !== undefined ? { tokens: call.tokens } : {}),
    ...(call.cost_usd !== undefined ? { costUsd: call.cost_usd } : {}),
    ...(call.retry_after_ms !== undefined ? { retryAfterMs: call.retry_after_ms } : {}),
    ...(call.judgement !== undefined ? { judgement: call.judgement } : {}),
  });
}
