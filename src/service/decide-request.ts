/**
 * One request against one run's actor: the command goes through the same propose/commit protocol
 * as the library's, and the decision sent back is read off the recorded events (the guard's own
 * GuardDecided), so the service never decides anything the log does not say.
 */
import {
  type EventOf,
  type Hashing,
  isTerminal,
  type LoopguardError,
  type Policy,
  type RecordedEvent,
} from '../domain/index.js';
import type { RunActor } from '../machines/index.js';
import { requestCommand } from './request-command.js';
import type { WireDecision, WireRequest } from './service-topics.js';

export interface Decided {
  /** The run's new events, seq after seq; empty when the request was refused. */
  readonly records: readonly RecordedEvent[];
  readonly decision: WireDecision;
}

/** Which request field a domain error is about, so a client can tell what to fix. */
const ERROR_FIELD: Readonly<Record<string, string>> = {
  unknown_call: 'call_id',
  run_exists: 'run_id',
  run_not_started: 'run_id',
  bad_args: 'args_json',
};

/** What a worker decides with: its policy, its secret-hashing key, its name in the decisions. */
export interface DecideContext {
  readonly policy: Policy;
  readonly hashing: Hashing;
  readonly workerId: string;
}

export function decideRequest(actor: RunActor, req: WireRequest, ctx: DecideContext, atMs: number): Decided {
  const base = { request_id: req.request_id, run_id: req.run_id, worker: ctx.workerId, decided_at_ms: atMs };
  const refuse = (e: LoopguardError): Decided => ({
    records: [],
    decision: {
      ...base,
      ...quiet,
      decision: 'error',
      status: actor.state.status,
      seq: actor.state.seq,
      message: e.message,
      error_code: e.code,
      error_field: (e.details.field as string | undefined) ?? ERROR_FIELD[e.code] ?? null,
    },
  });
  const cmd = requestCommand(req, ctx.policy, ctx.hashing);
  if (!cmd.ok) return refuse(cmd.error);
  const proposed = actor.propose(cmd.value);
  if (!proposed.ok) return refuse(proposed.error);
  actor.commit(proposed.value);
  const s = actor.state;
  const after = {
    ...base,
    ...quiet,
    status: s.status,
    seq: s.seq,
    report_json: isTerminal(s.status) && s.report !== null ? JSON.stringify(s.report) : null,
  };
  const phase = req.type === 'TOOL_CALL' ? 'before' : req.type === 'TOOL_RESULT' ? 'after' : null;
  const d = phase === null ? undefined : decided(proposed.value, phase);
  if (d === undefined)
    return {
      records: proposed.value,
      decision: { ...after, decision: 'recorded', message: `run is ${s.status}` },
    };
  return {
    records: proposed.value,
    decision: {
      ...after,
      decision: d.decision,
      rule: d.rule,
      message: d.message,
      warning: d.warning,
      wait_until_ms: d.waitUntilMs,
      evidence_json: JSON.stringify(d.evidence),
      result_json: d.decision === 'return_cached_success' ? cachedResult(d, actor, req.operation_key) : null,
    },
  };
}

const quiet = {
  rule: null,
  warning: null,
  wait_until_ms: null,
  evidence_json: null,
  result_json: null,
  report_json: null,
  error_code: null,
  error_field: null,
};

function decided(records: readonly RecordedEvent[], phase: 'before' | 'after') {
  for (const r of records) if (r.event.type === 'GuardDecided' && r.event.phase === phase) return r.event;
  return undefined;
}

/** The recorded result of the operation the cached call repeats. */
function cachedResult(d: EventOf<'GuardDecided'>, actor: RunActor, key: string | null): string {
  if (d.resultJson !== null) return d.resultJson;
  return (key === null ? null : actor.state.operations[key]?.resultJson) ?? 'null';
}
