import type { Command } from './commands.js';
import {
  applied,
  budgetWarnings,
  type DeciderDeps,
  decideRequest,
  decideResult,
  fail,
} from './decide-call.js';
import { ok, type Result } from './errors.js';
import { type DomainEvent, emptyEvidence, isTerminal } from './events.js';
import type { RunPolicy } from './policy.js';
import type { RunState } from './run-state.js';
import { stopReport } from './stop-report.js';

export type { DeciderDeps } from './decide-call.js';

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
        parentRunId: cmd.parentRunId ?? null,
      },
    ]);
  }
  const p = s.policy;
  if (s.status === 'NEW' || p === null) return fail('run_not_started', `run ${s.runId} has not been started`);
  switch (cmd.type) {
    case 'RequestToolCall':
      return decideRequest(s, p, cmd, deps);
    case 'CompleteToolCall':
      return decideResult(s, p, cmd);
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
    case 'Fail':
    case 'EndWithParent': {
      if (isTerminal(s.status)) return fail('run_ended', `run ${s.runId} has already ended (${s.status})`);
      if (s.inFlight !== null)
        return fail('call_in_flight', `run ${s.runId}: call ${s.inFlight.callId} has no result yet`);
      const end =
        cmd.type === 'EndWithParent'
          ? {
              terminal: 'PARTIAL' as const,
              reason: 'parent_stopped',
              message: `Stopped with its supervisor: parent run ${cmd.parentRunId} ended (${cmd.parentState}).`,
              gaps: [
                `parent run ${cmd.parentRunId} ended (${cmd.parentState}) before this sub-agent finished`,
              ],
            }
          : cmd.type === 'Cancel'
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
        {
          type: 'RunStopped',
          report: stopReport(s, cmd.atMs, { ...end, evidence: emptyEvidence, children: cmd.children }),
        },
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
