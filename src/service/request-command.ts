/**
 * A service request as the run command the library would issue for the same call: the worker
 * and the library share one decider, so a request means exactly what the matching library call
 * means. A request that cannot become a command is refused with the field it got wrong.
 */
import { hash } from 'node:crypto';
import {
  LoopguardError,
  type Policy,
  RESULT_KINDS,
  type Result,
  type ResultKind,
  resolvePolicy,
} from '../domain/index.js';
import type { CommandInput } from '../machines/index.js';
import type { WireRequest } from './service-topics.js';

const badField = (field: string, message: string): Result<never> => ({
  ok: false,
  error: new LoopguardError('bad_request', `${field}: ${message}`, { details: { field } }),
});

const opt = <K extends string, V>(key: K, v: V | null): { [P in K]?: V } =>
  (v === null ? {} : { [key]: v }) as { [P in K]?: V };

function parseArgs(json: string | null): Result<unknown> {
  if (json === null) return { ok: true, value: {} };
  try {
    return { ok: true, value: JSON.parse(json) };
  } catch (e) {
    return badField('args_json', `not JSON (${(e as Error).message})`);
  }
}

export function requestCommand(req: WireRequest, policy: Policy): Result<CommandInput> {
  if (req.request_id === '') return badField('request_id', 'must not be empty');
  if (req.run_id === '') return badField('run_id', 'must not be empty');
  switch (req.type) {
    case 'START_RUN':
      return {
        ok: true,
        value: {
          type: 'StartRun',
          runId: req.run_id,
          policy: resolvePolicy(policy, req.task_type ?? undefined),
          ...opt('taskType', req.task_type),
          ...opt('tenant', req.tenant),
          ...opt('progressVersion', req.progress_version),
        },
      };
    case 'TOOL_CALL': {
      if (req.tool === null || req.tool === '') return badField('tool', 'a TOOL_CALL names its tool');
      const args = parseArgs(req.args_json);
      if (!args.ok) return args;
      return {
        ok: true,
        value: {
          type: 'RequestToolCall',
          // The request id is the call id: a result names the call by the request that asked for it.
          callId: req.request_id,
          tool: req.tool,
          args: args.value,
          ...opt('operationKey', req.operation_key),
          ...opt('sideEffect', req.side_effect),
          ...opt('costEstimateUsd', req.cost_estimate_usd),
          ...opt('afterUserTurn', req.after_user_turn),
          ...opt('progressVersion', req.progress_version),
        },
      };
    }
    case 'TOOL_RESULT': {
      if (req.call_id === null || req.call_id === '')
        return badField('call_id', 'a TOOL_RESULT names the request_id of its TOOL_CALL');
      const kind = req.result_kind ?? 'SUCCESS';
      if (!RESULT_KINDS.includes(kind as ResultKind))
        return badField('result_kind', `${kind} is not one of ${RESULT_KINDS.join(', ')}`);
      const resultJson = req.result_json ?? 'null';
      return {
        ok: true,
        value: {
          type: 'CompleteToolCall',
          callId: req.call_id,
          kind: kind as ResultKind,
          resultJson,
          resultHash: req.result_hash ?? hash('sha256', resultJson, 'hex'),
          ...opt('code', req.result_code),
          ...opt('retryAfterMs', req.retry_after_ms),
          ...opt('tokens', req.tokens),
          ...opt('costUsd', req.cost_usd),
          ...opt('terminal', req.terminal),
          ...opt('inDoubt', req.in_doubt),
          ...opt('progressVersion', req.progress_version),
        },
      };
    }
    case 'FINISH':
      if (req.verified === null) return badField('verified', 'a FINISH carries the verifier verdict');
      return { ok: true, value: { type: 'Finish', verified: req.verified, ...opt('gaps', req.gaps) } };
    case 'CANCEL':
      return { ok: true, value: { type: 'Cancel', reason: req.reason ?? 'cancelled' } };
    case 'RESUME':
      if (req.precondition_change === null || req.precondition_change.trim() === '')
        return badField('precondition_change', 'a RESUME says what changed');
      return {
        ok: true,
        value: {
          type: 'Resume',
          preconditionChange: req.precondition_change,
          ...opt('approvedBy', req.approved_by),
        },
      };
    default:
      return badField('type', `unknown request type ${String(req.type)}`);
  }
}
