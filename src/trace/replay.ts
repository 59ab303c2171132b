import {
  type DeciderDeps,
  LoopguardError,
  type Policy,
  type RecordedEvent,
  resolvePolicy,
  type TerminalState,
} from '../domain/index.js';
import { type CommandInput, ManualClock, RunActor } from '../machines/index.js';
import type { TraceCall, TraceRun } from './trace-run.js';

/** One replayed run, in the shape `loopguard replay --json` prints (exactly these keys). */
export interface ReplaySummary {
  readonly run_id: string;
  readonly terminal_state: TerminalState;
  readonly rule: string | null;
  readonly stop_step: number | null;
  readonly calls_total: number;
  readonly calls_executed: number;
  readonly calls_cached: number;
}

export interface ReplayResult {
  readonly summary: ReplaySummary;
  /** Index into `run.calls` of the first call that did not run, or null. */
  readonly stopIndex: number | null;
  readonly events: readonly RecordedEvent[];
}

/** Without recorded times, a call follows the previous one by this much. */
const DEFAULT_GAP_MS = 1000;

/**
 * Offers each recorded call to the guard in order. Executed calls get their recorded result;
 * the first call the guard does not let run ends the replay. Deterministic: time comes from the
 * record (or a fixed gap), and a wait the guard asked for is taken as kept when no time was recorded.
 */
export function replayRun(run: TraceRun, policy: Policy, deps: DeciderDeps): ReplayResult {
  const clock = new ManualClock(run.calls[0]?.at_ms ?? 0);
  const actor = new RunActor(run.run_id, deps, clock);
  const events: RecordedEvent[] = [];
  const step = (cmd: CommandInput): RecordedEvent[] => {
    const r = actor.propose(cmd);
    if (!r.ok) throw r.error;
    actor.commit(r.value);
    events.push(...r.value);
    return r.value;
  };
  step({
    type: 'StartRun',
    runId: run.run_id,
    policy: resolvePolicy(policy),
    ...(run.source ? { tenant: run.source } : {}),
  });
  let executed = 0;
  let cached = 0;
  let stopIndex: number | null = null;
  let rule: string | null = null;
  for (const [i, call] of run.calls.entries()) {
    const wait = actor.state.waitUntilMs;
    clock.set(call.at_ms ?? (i === 0 ? clock.now() : clock.now() + DEFAULT_GAP_MS));
    if (call.at_ms === undefined && wait !== null) clock.set(wait);
    const decided = step(request(call, i)).find((e) => e.event.type === 'GuardDecided')?.event;
    if (decided?.type !== 'GuardDecided') throw new LoopguardError('internal', 'no decision recorded');
    if (decided.decision === 'return_cached_success') {
      cached++;
      continue;
    }
    if (decided.decision !== 'execute') {
      [stopIndex, rule] = [i, decided.rule];
      break;
    }
    executed++;
    const after = step(completion(call, i)).find(
      (e) => e.event.type === 'GuardDecided' && e.event.phase === 'after',
    )?.event;
    if (actor.state.report !== null) {
      stopIndex = i + 1 < run.calls.length ? i + 1 : null;
      rule = after?.type === 'GuardDecided' ? after.rule : null;
      break;
    }
  }
  if (actor.state.report === null) {
    // A refusal that did not end the run still ends the recording: the agent would have had to change course.
    if (rule !== null)
      step({
        type: 'Cancel',
        reason: `replay ended: the guard refused step ${run.calls[stopIndex ?? 0]?.step} (${rule})`,
      });
    else if (run.outcome.success === true) step({ type: 'Finish', verified: true });
    else if (run.outcome.success === false)
      step({ type: 'Fail', reason: run.outcome.detail ?? 'the recorded run failed' });
    else step({ type: 'Finish', verified: false, gaps: ['outcome unknown'] });
  }
  const terminal = actor.state.report?.terminalState ?? 'PARTIAL';
  actor.stop();
  return {
    summary: {
      run_id: run.run_id,
      terminal_state: terminal,
      rule,
      stop_step: stopIndex === null ? null : (run.calls[stopIndex]?.step ?? null),
      calls_total: run.calls.length,
      calls_executed: executed,
      calls_cached: cached,
    },
    stopIndex,
    events,
  };
}

function request(call: TraceCall, i: number): CommandInput {
  return {
    type: 'RequestToolCall',
    callId: `call-${i}`,
    tool: call.tool,
    args: call.args,
    afterUserTurn: call.after_user_turn,
    ...(call.operation_key !== undefined ? { operationKey: call.operation_key } : {}),
    ...(call.side_effect !== undefined ? { sideEffect: call.side_effect } : {}),
    ...(call.progress_version !== undefined ? { progressVersion: call.progress_version } : {}),
  };
}

function completion(call: TraceCall, i: number): CommandInput {
  return {
    type: 'CompleteToolCall',
    callId: `call-${i}`,
    kind: call.kind ?? 'SUCCESS',
    resultHash: call.result_sha256,
    resultJson: JSON.stringify(call.result),
    ...(call.code !== undefined ? { code: call.code } : {}),
    ...(call.progress_version !== undefined ? { progressVersion: call.progress_version } : {}),
    ...(call.tokens !== undefined ? { tokens: call.tokens } : {}),
    ...(call.cost_usd !== undefined ? { costUsd: call.cost_usd } : {}),
    ...(call.retry_after_ms !== undefined ? { retryAfterMs: call.retry_after_ms } : {}),
  };
}
