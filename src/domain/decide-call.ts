import type { Command } from './commands.js';
import { type ErrorCode, err, errorOf, ok, type Result } from './errors.js';
import { type DomainEvent, type EventOf, isTerminal, type RecordedEvent } from './events.js';
import { isFailedResult } from './failed-result.js';
import type { ChildState } from './family.js';
import { canonicalCall } from './fingerprint.js';
import { answersAsk, isInformative } from './informative.js';
import { CALL_FIELDS, fieldsProblem, inputError, OUTCOME_FIELDS } from './input-check.js';
import { intentOf } from './intent.js';
import { resultClassOf } from './normalised-result.js';
import { callIsSideEffect, KEY_WITHOUT_SIDE_EFFECT, type RunPolicy, toolPolicy } from './policy.js';
import { type Hashing, redactText } from './redact.js';
import { checkAfter } from './rules-after.js';
import { type CallRequest, checkBefore } from './rules-before.js';
import type { RunState } from './run-state.js';
import type { Similarity } from './similarity.js';
import { stopReport } from './stop-report.js';
import type { Verdict } from './verdict.js';

/** The decider's two hot paths: a call requested (the guard's answer before it) and its result. */

export interface DeciderDeps {
  readonly hashing: Hashing;
  readonly similarity: Similarity;
}

/**
 * The fold the decider looks ahead with, so later checks in one step see the effect of the events
 * decided before them: the run machine's (src/machines), the one place a run's status moves; the
 * domain cannot import it, so the caller hands it in.
 */
export type RunFold = (s: RunState, rec: RecordedEvent) => RunState;

type Cmd<T extends Command['type']> = Extract<Command, { type: T }>;

export const fail = (code: ErrorCode, message: string) => err(errorOf(code, message));

/** Folds events decided in this step, so later checks in the same step see their effect. */
export function applied(s: RunState, events: readonly DomainEvent[], atMs: number, fold: RunFold): RunState {
  return events.reduce(
    (st, event, i) => fold(st, { eventId: '', runId: s.runId, seq: s.seq + i + 1, atMs, event }),
    s,
  );
}

function decided(callId: string | null, phase: 'before' | 'after', v: Verdict): EventOf<'GuardDecided'> {
  return {
    type: 'GuardDecided',
    callId,
    phase,
    decision: v.decision,
    rule: v.rule,
    message: v.message,
    evidence: v.evidence,
    waitUntilMs: v.waitUntilMs ?? null,
    warning: v.warning ?? null,
    resultJson: v.resultJson ?? null,
  };
}

function stopped(
  s: RunState,
  v: Verdict,
  atMs: number,
  children?: readonly ChildState[],
): EventOf<'RunStopped'> {
  return {
    type: 'RunStopped',
    report: stopReport(s, atMs, {
      terminal: v.terminal ?? 'STOPPED_LOOP_GUARD',
      reason: v.rule ?? 'stopped',
      message: v.message,
      evidence: v.evidence,
      unmetPrecondition: v.unmetPrecondition,
      children,
    }),
  };
}

/** Soft warnings once a budget passes `warnAt` of its limit, each at most once per run. */
export function budgetWarnings(s: RunState, p: RunPolicy, atMs: number): DomainEvent[] {
  const out: DomainEvent[] = [];
  const check = (budget: string, used: number, limit: number | null) => {
    if (limit === null || limit <= 0 || s.warned.includes(budget) || used < p.warnAt * limit) return;
    out.push({
      type: 'BudgetWarning',
      budget,
      used,
      limit,
      message: `${budget}: ${used} of ${limit} used; ${Math.max(0, limit - used)} left. Start wrapping up.`,
    });
  };
  check('steps', s.steps, p.maxSteps);
  check('tool_calls', s.toolCalls, p.maxToolCalls);
  check('tokens', s.tokens, p.maxTokens);
  check('cost_usd', s.costUsd, p.maxCostUsd);
  check('wall_clock_ms', atMs - s.startedAtMs, p.maxWallClockMs);
  return out;
}

export function decideRequest(
  s: RunState,
  p: RunPolicy,
  cmd: Cmd<'RequestToolCall'>,
  deps: DeciderDeps,
): Result<DomainEvent[]> {
  if (s.inFlight !== null)
    return fail(
      'call_in_flight',
      `run ${s.runId}: call ${s.inFlight.callId} has no result yet; calls of one run go one at a time`,
    );
  const bad = fieldsProblem(cmd, CALL_FIELDS, '');
  if (bad !== null) return err(inputError('invalid_call', bad.path, bad.problem));
  if (cmd.sideEffect === false && cmd.operationKey !== undefined)
    return err(inputError('invalid_call', 'sideEffect', KEY_WITHOUT_SIDE_EFFECT));
  const canon = canonicalCall(cmd.tool, cmd.args, deps.hashing, toolPolicy(p, cmd.tool).volatileArgs);
  if (!canon.ok) return canon;
  const call = canon.value;
  const sideEffect = callIsSideEffect(p, call.tool, cmd.sideEffect, cmd.operationKey);
  // An operation key is a name the caller builds, sometimes from a token: it is recorded redacted.
  const operationKey = cmd.operationKey === undefined ? null : redactText(cmd.operationKey, deps.hashing);
  // Computed once here: the rules compare it, and the event carries it to the fold.
  const intent = intentOf(call.argsJson);
  const request: CallRequest = {
    call,
    intent,
    operationKey,
    sideEffect,
    costEstimateUsd: cmd.costEstimateUsd ?? null,
    ledger: cmd.ledger ?? { status: 'none' },
    atMs: cmd.atMs,
    afterUserTurn: cmd.afterUserTurn ?? false,
    progressVersion: cmd.progressVersion ?? null,
    family: cmd.family,
  };
  const check = checkBefore(s, p, request, deps.similarity);
  const events: DomainEvent[] = [
    {
      type: 'ToolCallRequested',
      callId: cmd.callId,
      tool: call.tool,
      argsJson: call.argsJson,
      fingerprint: call.fingerprint,
      operationKey,
      sideEffect,
      costEstimateUsd: cmd.costEstimateUsd ?? null,
      afterUserTurn: cmd.afterUserTurn ?? false,
      progressVersion: cmd.progressVersion ?? null,
      similarTo: check.similarTo,
      similarity: check.similarity,
      intent,
    },
    decided(cmd.callId, 'before', check.verdict),
  ];
  if (check.verdict.terminal !== undefined && !isTerminal(s.status))
    events.push(stopped(s, check.verdict, cmd.atMs, cmd.family?.children));
  if (check.verdict.decision === 'execute' && sideEffect && operationKey !== null) {
    events.push({ type: 'OperationClaimed', operationKey, callId: cmd.callId });
  }
  return ok(events);
}

export function decideResult(
  s: RunState,
  p: RunPolicy,
  cmd: Cmd<'CompleteToolCall'>,
  deps: DeciderDeps,
  fold: RunFold,
): Result<DomainEvent[]> {
  const call = s.inFlight;
  if (call === null || call.callId !== cmd.callId)
    return fail('unknown_call', `run ${s.runId}: no call ${cmd.callId} is waiting for a result`);
  const bad = fieldsProblem(cmd, OUTCOME_FIELDS, 'result');
  if (bad !== null) return err(inputError('invalid_result', bad.path, bad.problem));
  const done: EventOf<'ToolCallCompleted'> = {
    type: 'ToolCallCompleted',
    callId: cmd.callId,
    kind: cmd.kind,
    code: cmd.code === undefined ? null : redactText(cmd.code, deps.hashing),
    resultHash: cmd.resultHash,
    terminal: cmd.terminal ?? false,
    progressVersion: cmd.progressVersion ?? null,
    tokens: cmd.tokens ?? 0,
    // A call that reports no cost is charged its estimate: else a tool that never reports cost
    // spends nothing, and maxCostUsd would never stop it.
    costUsd: cmd.costUsd ?? call.costEstimateUsd ?? toolPolicy(p, call.tool).costUsd ?? 0,
    retryAfterMs: cmd.retryAfterMs ?? null,
    durationMs: Math.max(0, cmd.atMs - call.startedAtMs),
    informative:
      cmd.judgement?.informative ?? (cmd.resultJson === undefined || isInformative(cmd.resultJson)),
    answersAsk:
      cmd.judgement?.answersAsk ??
      (cmd.resultJson === undefined || answersAsk(cmd.resultJson, call.argsJson)),
    resultClass:
      cmd.judgement?.resultClass !== undefined
        ? cmd.judgement.resultClass
        : cmd.resultJson === undefined
          ? null
          : resultClassOf(cmd.kind, cmd.code ?? null, cmd.resultJson, deps.hashing),
    failed:
      cmd.judgement?.failed ??
      (cmd.resultJson === undefined
        ? cmd.kind !== 'SUCCESS' && cmd.kind !== 'PENDING'
        : isFailedResult(cmd.kind, cmd.resultJson)),
  };
  const events: DomainEvent[] = [done];
  // Keyed or not, a side effect that may have happened is never run again blindly.
  const inDoubt = (cmd.inDoubt ?? false) && call.sideEffect;
  if (call.operationKey !== null && call.sideEffect) {
    const op = { operationKey: call.operationKey, callId: call.callId };
    if (inDoubt) events.push({ type: 'OperationInDoubt', ...op, reason: done.code ?? 'no answer' });
    // PENDING: the operation was accepted and is under way, so its key stays taken; a repeat of it
    // gets this answer back, never a second start. Any other failure means it did not happen.
    else if (cmd.kind !== 'SUCCESS' && cmd.kind !== 'PENDING')
      events.push({ type: 'OperationReleased', ...op, reason: `${cmd.kind} ${done.code ?? ''}`.trim() });
    else events.push({ type: 'OperationCompleted', ...op, resultJson: cmd.resultJson ?? 'null' });
  }
  const after = applied(s, events, cmd.atMs, fold);
  const v = checkAfter(after, p, call, done, cmd.atMs, inDoubt);
  events.push(decided(call.callId, 'after', v));
  if (v.waitUntilMs !== undefined) {
    events.push({
      type: 'RunWaiting',
      reason: v.rule ?? 'wait',
      untilMs: v.waitUntilMs,
      callId: call.callId,
    });
  }
  events.push(...budgetWarnings(after, p, cmd.atMs));
  if (v.terminal !== undefined)
    events.push(stopped(applied(s, events, cmd.atMs, fold), v, cmd.atMs, cmd.family?.children));
  return ok(events);
}
