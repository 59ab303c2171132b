import type { Command } from './commands.js';
import { err, LoopguardError, ok, type Result } from './errors.js';
import { type DomainEvent, type EventOf, emptyEvidence, isTerminal, type RecordedEvent } from './events.js';
import { evolve } from './evolve.js';
import { canonicalCall, type Hashing } from './fingerprint.js';
import { isInformative } from './informative.js';
import { type RunPolicy, toolPolicy } from './policy.js';
import { checkAfter } from './rules-after.js';
import { checkBefore } from './rules-before.js';
import type { RunState } from './run-state.js';
import type { Similarity } from './similarity.js';
import { stopReport } from './stop-report.js';
import type { Verdict } from './verdict.js';

export interface DeciderDeps {
  readonly hashing: Hashing;
  readonly similarity: Similarity;
}

const fail = (code: string, message: string) => err(new LoopguardError(code, message));

/** Folds events decided in this step, so later checks in the same step see their effect. */
const applied = (s: RunState, events: readonly DomainEvent[], atMs: number): RunState =>
  events.reduce(
    (st, event, i) =>
      evolve(st, { eventId: '', runId: s.runId, seq: s.seq + i + 1, atMs, event } as RecordedEvent),
    s,
  );

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

function stopped(s: RunState, v: Verdict, atMs: number): EventOf<'RunStopped'> {
  return {
    type: 'RunStopped',
    report: stopReport(s, atMs, {
      terminal: v.terminal ?? 'STOPPED_LOOP_GUARD',
      reason: v.rule ?? 'stopped',
      message: v.message,
      evidence: v.evidence,
      unmetPrecondition: v.unmetPrecondition,
    }),
  };
}

/** Soft warnings once a budget passes `warnAt` of its limit, each at most once per run. */
function budgetWarnings(s: RunState, p: RunPolicy, atMs: number): DomainEvent[] {
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

/**
 * The decider: given what the run has seen and a command, the events that follow. Pure: no
 * clock (time comes in the command), no I/O, no randomness.
 */
export function decide(s: RunState, cmd: Command, deps: DeciderDeps): Result<DomainEvent[]> {
  if (cmd.type === 'StartRun') {
    if (s.status !== 'NEW') return fail('run_exists', `run ${s.runId} was already started`);
    return ok([
      {
        type: 'RunStarted',
        runId: cmd.runId,
        taskType: cmd.taskType ?? null,
        tenant: cmd.tenant ?? null,
        policy: cmd.policy,
        progressVersion: cmd.progressVersion ?? 0,
        meta: cmd.meta ?? {},
      },
    ]);
  }
  const p = s.policy;
  if (s.status === 'NEW' || p === null) return fail('run_not_started', `run ${s.runId} has not been started`);
  switch (cmd.type) {
    case 'RequestToolCall': {
      if (s.inFlight !== null)
        return fail(
          'call_in_flight',
          `run ${s.runId}: call ${s.inFlight.callId} has no result yet; calls of one run go one at a time`,
        );
      const canon = canonicalCall(cmd.tool, cmd.args, deps.hashing, toolPolicy(p, cmd.tool).volatileArgs);
      if (!canon.ok) return canon;
      const call = canon.value;
      const sideEffect = cmd.sideEffect ?? toolPolicy(p, call.tool).sideEffect;
      const operationKey = cmd.operationKey ?? null;
      const check = checkBefore(
        s,
        p,
        {
          call,
          operationKey,
          sideEffect,
          costEstimateUsd: cmd.costEstimateUsd ?? null,
          ledger: cmd.ledger ?? { status: 'none' },
          atMs: cmd.atMs,
          afterUserTurn: cmd.afterUserTurn ?? false,
          progressVersion: cmd.progressVersion ?? null,
        },
        deps.similarity,
      );
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
        },
        decided(cmd.callId, 'before', check.verdict),
      ];
      if (check.verdict.terminal !== undefined && !isTerminal(s.status))
        events.push(stopped(s, check.verdict, cmd.atMs));
      if (check.verdict.decision === 'execute' && sideEffect && operationKey !== null) {
        events.push({ type: 'OperationClaimed', operationKey, callId: cmd.callId });
      }
      return ok(events);
    }
    case 'CompleteToolCall': {
      const call = s.inFlight;
      if (call === null || call.callId !== cmd.callId)
        return fail('unknown_call', `run ${s.runId}: no call ${cmd.callId} is waiting for a result`);
      const done: EventOf<'ToolCallCompleted'> = {
        type: 'ToolCallCompleted',
        callId: cmd.callId,
        kind: cmd.kind,
        code: cmd.code ?? null,
        resultHash: cmd.resultHash,
        terminal: cmd.terminal ?? false,
        progressVersion: cmd.progressVersion ?? null,
        tokens: cmd.tokens ?? 0,
        costUsd: cmd.costUsd ?? 0,
        retryAfterMs: cmd.retryAfterMs ?? null,
        durationMs: Math.max(0, cmd.atMs - call.startedAtMs),
        informative: cmd.resultJson === undefined || isInformative(cmd.resultJson),
      };
      const events: DomainEvent[] = [done];
      const inDoubt = (cmd.inDoubt ?? false) && call.operationKey !== null;
      if (call.operationKey !== null && call.sideEffect) {
        if (inDoubt)
          events.push({
            type: 'OperationInDoubt',
            operationKey: call.operationKey,
            callId: call.callId,
            reason: cmd.code ?? 'no answer',
          });
        else if (cmd.kind !== 'SUCCESS')
          events.push({
            type: 'OperationReleased',
            operationKey: call.operationKey,
            callId: call.callId,
            reason: `${cmd.kind} ${cmd.code ?? ''}`.trim(),
          });
        else
          events.push({
            type: 'OperationCompleted',
            operationKey: call.operationKey,
            callId: call.callId,
            resultJson: cmd.resultJson ?? 'null',
          });
      }
      const after = applied(s, events, cmd.atMs);
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
      if (v.terminal !== undefined) events.push(stopped(applied(s, events, cmd.atMs), v, cmd.atMs));
      return ok(events);
    }
    case 'RecordModelUsage': {
      const usage: DomainEvent = {
        type: 'ModelUsageRecorded',
        tokensIn: cmd.tokensIn,
        tokensOut: cmd.tokensOut,
        costUsd: cmd.costUsd,
      };
      return ok([usage, ...budgetWarnings(applied(s, [usage], cmd.atMs), p, cmd.atMs)]);
    }
    case 'Finish':
    case 'Cancel':
    case 'Fail': {
      if (isTerminal(s.status)) return fail('run_ended', `run ${s.runId} has already ended (${s.status})`);
      if (s.inFlight !== null)
        return fail('call_in_flight', `run ${s.runId}: call ${s.inFlight.callId} has no result yet`);
      const end =
        cmd.type === 'Cancel'
          ? {
              terminal: 'PARTIAL' as const,
              reason: 'cancelled',
              message: `Cancelled: ${cmd.reason}`,
              gaps: [cmd.reason],
            }
          : cmd.type === 'Fail'
            ? {
                terminal: 'FAILED' as const,
                reason: 'failed',
                message: `Failed: ${cmd.reason}`,
                gaps: [cmd.reason],
              }
            : cmd.verified
              ? {
                  terminal: 'COMPLETED' as const,
                  reason: 'verified',
                  message: 'The verifier confirmed the goal is met.',
                  gaps: cmd.gaps ?? [],
                }
              : {
                  terminal: 'PARTIAL' as const,
                  reason: 'unverified',
                  message: 'Finished without verification: a partial result.',
                  gaps: cmd.gaps ?? [],
                };
      return ok([
        { type: 'RunStopped', report: stopReport(s, cmd.atMs, { ...end, evidence: emptyEvidence }) },
      ]);
    }
    case 'Resume': {
      if (s.status === 'COMPLETED')
        return fail('run_completed', `run ${s.runId} is COMPLETED; there is nothing to resume`);
      if (cmd.preconditionChange.trim() === '') {
        return fail(
          'precondition_unchanged',
          `run ${s.runId}: a resume needs a recorded precondition change (what changed, and who approved it); resuming unchanged would loop again`,
        );
      }
      const policy = cmd.policy ?? p;
      const resumed: DomainEvent = {
        type: 'RunResumed',
        preconditionChange: cmd.preconditionChange.trim(),
        approvedBy: cmd.approvedBy ?? null,
        fromCheckpoint: s.lastCheckpoint?.id ?? null,
        progressVersion: Math.max(s.progressVersion, s.lastCheckpoint?.progressVersion ?? 0),
        policy: cmd.policy ?? null,
      };
      const spent = budgetsSpent(s, policy);
      if (spent !== null)
        return fail(
          'budget_still_spent',
          `run ${s.runId}: the ${spent} budget is still spent; resume with a policy that raises it`,
        );
      return ok([resumed]);
    }
    case 'SettleOperation': {
      const own = s.operations[cmd.operationKey];
      // Only this run's own open entries are settled here; the shared ledger is settled by the runtime.
      if (own === undefined || own.status === 'completed') return ok([]);
      if (cmd.happened)
        return ok([
          {
            type: 'OperationCompleted',
            operationKey: cmd.operationKey,
            callId: own.callId,
            resultJson: cmd.resultJson ?? 'null',
          },
        ]);
      return ok([
        {
          type: 'OperationReleased',
          operationKey: cmd.operationKey,
          callId: own.callId,
          reason: `settled by ${cmd.settledBy}: it did not happen`,
        },
      ]);
    }
    case 'RecordCheckpoint': {
      const completed = Object.entries(s.operations)
        .filter(([, o]) => o.status === 'completed')
        .map(([k]) => k);
      return ok([
        {
          type: 'CheckpointRecorded',
          checkpointId: cmd.checkpointId ?? `checkpoint-${s.seq + 1}`,
          progressVersion: s.progressVersion,
          completedOperations: completed,
        },
      ]);
    }
  }
}

/** Budgets a resume cannot outrun; the wall clock starts afresh with an approved resume. */
function budgetsSpent(s: RunState, p: RunPolicy): string | null {
  if (p.maxSteps !== null && s.steps >= p.maxSteps) return 'step';
  if (p.maxToolCalls !== null && s.toolCalls >= p.maxToolCalls) return 'tool-call';
  if (p.maxTokens !== null && s.tokens >= p.maxTokens) return 'token';
  if (p.maxCostUsd !== null && s.costUsd >= p.maxCostUsd) return 'cost';
  return null;
}
