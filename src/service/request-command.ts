/**
 * A service request as the run command the library would issue for the same call: the worker
 * and the library share one decider, so a request means exactly what the matching library call
 * means. A request that cannot become a command is refused with the field it got wrong.
 */
import {
  CALL_FIELDS,
  type FieldSpec,
  fieldsProblem,
  type Hashing,
  InvalidInputError,
  MODEL_USAGE_FIELDS,
  nameProblem,
  OUTCOME_FIELDS,
  type Policy,
  RESULT_KINDS,
  type Result,
  type ResultKind,
  redactText,
  resolvePolicy,
  resultHash,
  resultJsonOf,
  START_FIELDS,
  textProblem,
} from '../domain/index.js';
import type { CommandInput } from '../machines/index.js';
import type { ReissueNote } from '../ports/ledger.js';
import type { WireRequest } from './service-topics.js';

const badField = (field: string, message: string): Result<never> => ({
  ok: false,
  error: new InvalidInputError('bad_request', field, `${field}: ${message}`),
});

const opt = <K extends string, V>(key: K, v: V | null): { [P in K]?: V } =>
  (v === null ? {} : { [key]: v }) as { [P in K]?: V };

const wireName = (field: string): string => field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/**
 * The same boundary checks the library and the trace reader apply (names, integers, ranges the
 * encoder and the runtime can honour), reported by the request's own field names.
 */
function problem(fields: Readonly<Record<string, unknown>>, spec: FieldSpec): Result<never> | null {
  const bad = fieldsProblem(fields, spec, '');
  return bad === null ? null : badField(wireName(bad.path), bad.problem);
}

function nameField(field: string, v: string | null): Result<never> | null {
  if (v === null) return null;
  const bad = nameProblem(v);
  return bad === null ? null : badField(field, bad);
}

/** Every request names itself and its run. */
function idsProblem(req: WireRequest): Result<never> | null {
  if (req.request_id === '') return badField('request_id', 'must not be empty');
  return nameField('run_id', req.run_id) ?? nameField('request_id', req.request_id);
}

/**
 * A result as the worker records it: canonical and with secrets redacted under the workers' key,
 * whatever the client did (a client in any language may publish it raw).
 */
function recordedResult(json: string | null, hashing: Hashing): Result<string> {
  if (json === null) return { ok: true, value: 'null' };
  const parsed = parseJson('result_json', json);
  if (!parsed.ok) return parsed;
  const canonical = resultJsonOf(parsed.value, hashing);
  return canonical.ok
    ? { ok: true, value: canonical.value.json }
    : badField('result_json', canonical.error.message);
}

function parseJson(field: string, json: string | null, ifNull?: unknown): Result<unknown> {
  if (json === null) return { ok: true, value: ifNull };
  try {
    return { ok: true, value: JSON.parse(json) };
  } catch (e) {
    return badField(field, `not JSON (${(e as Error).message})`);
  }
}

export function requestCommand(req: WireRequest, policy: Policy, hashing: Hashing): Result<CommandInput> {
  const badIds = idsProblem(req);
  if (badIds !== null) return badIds;
  switch (req.type) {
    case 'START_RUN': {
      const start = {
        ...opt('taskType', req.task_type),
        ...opt('tenant', req.tenant),
        ...opt('progressVersion', req.progress_version),
      };
      // The library's startRun check, by the same spec.
      const bad = problem(start, START_FIELDS);
      if (bad !== null) return bad;
      const resolved = resolvePolicy(policy, req.task_type ?? undefined);
      return { ok: true, value: { type: 'StartRun', runId: req.run_id, policy: resolved, ...start } };
    }
    case 'TOOL_CALL': {
      if (req.tool === null || req.tool === '') return badField('tool', 'a TOOL_CALL names its tool');
      const call = {
        ...opt('operationKey', req.operation_key),
        ...opt('sideEffect', req.side_effect),
        ...opt('costEstimateUsd', req.cost_estimate_usd),
        ...opt('afterUserTurn', req.after_user_turn),
        ...opt('progressVersion', req.progress_version),
      };
      const bad = nameField('tool', req.tool) ?? problem(call, CALL_FIELDS);
      if (bad !== null) return bad;
      const args = parseJson('args_json', req.args_json, {});
      if (!args.ok) return args;
      if (req.reconciled !== null) {
        // A reconcile answer is about the call's operation, and its result is recorded as settled.
        if (req.operation_key === null)
          return badField('reconciled', 'a reconcile answer is for the operation key of the call');
        const answer = recordedResult(req.result_json, hashing);
        if (!answer.ok) return answer;
      }
      return {
        ok: true,
        value: {
          type: 'RequestToolCall',
          // The request id is the call id: a result names the call by the request that asked for it.
          callId: req.request_id,
          tool: req.tool,
          args: args.value,
          ...call,
        },
      };
    }
    case 'TOOL_RESULT': {
      if (req.call_id === null || req.call_id === '')
        return badField('call_id', 'a TOOL_RESULT names the request_id of its TOOL_CALL');
      const kind = req.result_kind ?? 'SUCCESS';
      if (!RESULT_KINDS.includes(kind as ResultKind))
        return badField('result_kind', `${kind} is not one of ${RESULT_KINDS.join(', ')}`);
      const outcome = {
        ...opt('code', req.result_code),
        ...opt('retryAfterMs', req.retry_after_ms),
        ...opt('tokens', req.tokens),
        ...opt('costUsd', req.cost_usd),
        ...opt('terminal', req.terminal),
        ...opt('inDoubt', req.in_doubt),
        ...opt('progressVersion', req.progress_version),
      };
      // The wire names the result's code result_code, which the outcome's fields call code.
      const bad = nameField('result_code', req.result_code) ?? problem(outcome, OUTCOME_FIELDS);
      if (bad !== null) return bad;
      const recorded = recordedResult(req.result_json, hashing);
      if (!recorded.ok) return recorded;
      const resultJson = recorded.value;
      return {
        ok: true,
        value: {
          type: 'CompleteToolCall',
          callId: req.call_id,
          kind: kind as ResultKind,
          resultJson,
          // Hashed from what is recorded, by the one function the library hashes a tool's answer
          // with: a client's own result_hash may cover a secret the record no longer holds.
          resultHash: resultHash(kind as ResultKind, req.result_code, resultJson, hashing),
          ...outcome,
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
    case 'MODEL_USAGE': {
      if (req.tokens_in === null) return badField('tokens_in', 'a MODEL_USAGE counts its prompt tokens');
      if (req.tokens_out === null)
        return badField('tokens_out', 'a MODEL_USAGE counts its completion tokens');
      const usage = { tokensIn: req.tokens_in, tokensOut: req.tokens_out, costUsd: req.cost_usd ?? 0 };
      const bad = problem(usage, MODEL_USAGE_FIELDS);
      if (bad !== null) return bad;
      return { ok: true, value: { type: 'RecordModelUsage', ...usage } };
    }
    case 'CHECKPOINT': {
      const bad = nameField('checkpoint_id', req.checkpoint_id);
      if (bad !== null) return bad;
      return { ok: true, value: { type: 'RecordCheckpoint', ...opt('checkpointId', req.checkpoint_id) } };
    }
    case 'SETTLE': {
      if (req.operation_key === null) return badField('operation_key', 'a SETTLE names the operation');
      if (req.happened === null) return badField('happened', 'a SETTLE says whether it happened');
      if (req.settled_by === null) return badField('settled_by', 'a SETTLE says who settled it');
      const bad = nameField('operation_key', req.operation_key) ?? nameField('settled_by', req.settled_by);
      if (bad !== null) return bad;
      // The shared ledger's entry is settled first, as run.settle does (CommandPath.settle).
      const recorded = recordedResult(req.result_json, hashing);
      if (!recorded.ok) return recorded;
      return {
        ok: true,
        value: {
          type: 'SettleOperation',
          operationKey: req.operation_key,
          happened: req.happened,
          resultJson: recorded.value,
          settledBy: req.settled_by,
        },
      };
    }
    case 'REISSUE':
      return badField('type', 'a REISSUE is no run command: the ledger decides it (see reissueNote)');
    default:
      return badField('type', `unknown request type ${String(req.type)}`);
  }
}

/**
 * A REISSUE as the note the library's `run.reissue` gives the ledger: keys as the ledger holds them
 * (redacted), the reason trimmed. The request id is the note's call id, so the ledger itself says
 * which request made a note, and a repeat of that request can be told from a second reissue.
 */
export function reissueNote(req: WireRequest, hashing: Hashing): Result<ReissueNote> {
  const badIds = idsProblem(req);
  if (badIds !== null) return badIds;
  if (req.operation_key === null)
    return badField('operation_key', 'a REISSUE names the operation it repeats');
  if (req.new_operation_key === null)
    return badField('new_operation_key', 'a REISSUE names the key the operation runs under again');
  if (req.reason === null) return badField('reason', 'a REISSUE records its reason');
  const bad =
    nameField('operation_key', req.operation_key) ?? nameField('new_operation_key', req.new_operation_key);
  if (bad !== null) return bad;
  // A blank reason is the ledger's to refuse (reissue_refused), as in the library; only text it
  // cannot record is a bad request.
  const badReason = textProblem(req.reason);
  if (badReason !== null) return badField('reason', badReason);
  return {
    ok: true,
    value: {
      oldKey: redactText(req.operation_key, hashing),
      newKey: redactText(req.new_operation_key, hashing),
      reason: redactText(req.reason.trim(), hashing),
      approvedBy: req.approved_by === null ? null : redactText(req.approved_by, hashing),
      by: { runId: req.run_id, callId: req.request_id },
    },
  };
}
