import type { Command } from './commands.js';
import {
  applied,
  budgetWarnings,
  type DeciderDeps,
  decideRequest,
  decideResult,
  fail,
  type RunFold,
} from './decide-call.js';
import { err, ok, type Result } from './errors.js';
import { type DomainEvent, emptyEvidence, isTerminal } from './events.js';
import { spentBudget } from './family.js';
import {
  fieldsProblem,
  inputError,
  MODEL_USAGE_FIELDS,
  nameProblem,
  own,
  resumeProblem,
  textProblem,
} from './input-check.js';
import { redactText } from './redact.js';
import type { RunState } from './run-state.js';
import { operationsIn, stopReport } from './stop-report.js';

export type { DeciderDeps, RunFold } from './decide-call.js';

/**
 * The decider: given what the run has seen and a command, the events that follow. Pure: no
 * clock (time comes in the command), no I/O, no randomness. `fold` is the run machine's fold,
 * which the decider looks ahead with.
 */
export function decide(s: RunState, cmd: Command, deps: DeciderDeps, fold: RunFold): Result<DomainEvent[]> {
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
      return decideResult(s, p, cmd, deps, fold);
    case 'RecordModelUsage': {
      if (isTerminal(s.status))
        return fail(
          'run_ended',
          `run ${s.runId} has already ended (${s.status}); its usage is no longer counted`,
        );
      const bad = fieldsProblem(cmd, MODEL_USAGE_FIELDS, 'usage');
      if (bad !== null) return err(inputError('invalid_usage', bad.path, bad.problem));
      const usage: DomainEvent = {
        type: 'ModelUsageRecorded',
        tokensIn: cmd.tokensIn,
        tokensOut: cmd.tokensOut,
        costUsd: cmd.costUsd,
      };
      return ok([usage, ...budgetWarnings(applied(s, [usage], cmd.atMs, fold), p, cmd.atMs)]);
    }
    case 'Finish':
    case 'Cancel':
    case 'Fail':
    case 'EndWithParent': {
      if (isTerminal(s.status)) return fail('run_ended', `run ${s.runId} has already ended (${s.status})`);
      if (s.inFlight !== null)
        return fail('call_in_flight', `run ${s.runId}: call ${s.inFlight.callId} has no result yet`);
      const texts =
        cmd.type === 'Finish' ? (cmd.gaps ?? []) : cmd.type === 'EndWithParent' ? [] : [cmd.reason];
      for (const [i, t] of texts.entries()) {
        const bad = textProblem(t);
        if (bad !== null)
          return err(inputError('invalid_input', cmd.type === 'Finish' ? `gaps[${i}]` : 'reason', bad));
      }
      // Reasons and gaps are free text a caller may paste a credential into.
      const redacted = texts.map((t) => redactText(t, deps.hashing));
      const reason = redacted[0] ?? '';
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
                message: `Cancelled: ${reason}`,
                gaps: [reason],
              }
            : cmd.type === 'Fail'
              ? {
                  terminal: 'FAILED' as const,
                  reason: 'failed',
                  message: `Failed: ${reason}`,
                  gaps: [reason],
                }
              : cmd.verified
                ? {
                    terminal: 'COMPLETED' as const,
                    reason: 'verified',
                    message: 'The verifier confirmed the goal is met.',
                    gaps: redacted,
                  }
                : {
                    terminal: 'PARTIAL' as const,
                    reason: 'unverified',
                    message: 'Finished without verification: a partial result.',
                    gaps: redacted,
                  };
      return ok([
        {
          type: 'RunStopped',
          report: stopReport(s, cmd.atMs, { ...end, evidence: emptyEvidence, children: cmd.children }),
        },
      ]);
    }
    case 'Resume': {
      // A COMPLETED run is never resumed: the run machine refuses it (illegal_transition).
      const bad = resumeProblem(cmd);
      if (bad !== null) return err(inputError('invalid_input', bad.path, bad.problem));
      if (cmd.preconditionChange.trim() === '') {
        return fail(
          'precondition_unchanged',
          `run ${s.runId}: a resume needs a recorded precondition change (what changed, and who approved it); resuming unchanged would loop again`,
        );
      }
      const policy = cmd.policy ?? p;
      const resumed: DomainEvent = {
        type: 'RunResumed',
        preconditionChange: redactText(cmd.preconditionChange.trim(), deps.hashing),
        approvedBy: cmd.approvedBy ?? null,
        fromCheckpoint: s.lastCheckpoint?.id ?? null,
        progressVersion: Math.max(s.progressVersion, s.lastCheckpoint?.progressVersion ?? 0),
        policy: cmd.policy ?? null,
      };
      // The wall clock starts afresh with an approved resume; the other budgets stay spent.
      const spent = spentBudget(policy, s);
      if (spent !== null)
        return fail(
          'budget_still_spent',
          `run ${s.runId}: the ${spent[1]} budget is still spent; resume with a policy that raises it`,
        );
      return ok([resumed]);
    }
    case 'SettleOperation': {
      // Keys are recorded redacted (see decideRequest), so the lookup is by the redacted key.
      const operationKey = redactText(cmd.operationKey, deps.hashing);
      const entry = own(s.operations, operationKey);
      // Only this run's own open entries are settled here; the shared ledger is settled by the runtime.
      if (entry === undefined || entry.status === 'completed') return ok([]);
      const op = { operationKey, callId: entry.callId };
      if (cmd.happened)
        return ok([{ type: 'OperationCompleted', ...op, resultJson: cmd.resultJson ?? 'null' }]);
      const reason = `settled by ${redactText(cmd.settledBy, deps.hashing)}: it did not happen`;
      return ok([{ type: 'OperationReleased', ...op, reason }]);
    }
    case 'RecordCheckpoint': {
      const bad = fieldsProblem(cmd, { checkpointId: nameProblem }, '');
      if (bad !== null) return err(inputError('invalid_input', bad.path, bad.problem));
      return ok([
        {
          type: 'CheckpointRecorded',
          checkpointId: cmd.checkpointId ?? `checkpoint-${s.seq + 1}`,
          progressVersion: s.progressVersion,
          completedOperations: operationsIn(s, 'completed'),
        },
      ]);
    }
  }
}
