import {
  type Decision,
  type EventOf,
  type Evidence,
  isTerminal,
  jsonValue,
  LoopguardError,
  own,
  type RecordedEvent,
  type ResultKind,
  type RunState,
  type StopReport,
} from '../domain/index.js';
import type { CallEnd } from '../telemetry/call-telemetry.js';
import type { RunView } from './run.js';

/** What `run.call` gives back: the agent loop acts on `status`, and can show `message` to the model. */
export type CallResult =
  | {
      readonly status: 'executed';
      readonly value: unknown;
      readonly kind: ResultKind;
      readonly code: string | null;
      /** The guard's decision after the call: continue, retry_after_backoff, wait_bounded, complete, stop ... */
      readonly decision: Decision;
      readonly rule: string | null;
      readonly message: string;
      readonly warning: string | null;
      readonly waitUntilMs: number | null;
      /** Set when this call ended the run. */
      readonly report: StopReport | null;
    }
  | { readonly status: 'cached'; readonly value: unknown; readonly message: string }
  | {
      readonly status: 'refused';
      readonly rule: string;
      readonly message: string;
      readonly evidence: Evidence;
    }
  | {
      readonly status: 'waiting';
      readonly rule: string;
      readonly message: string;
      readonly waitUntilMs: number | null;
    }
  | {
      readonly status: 'stopped';
      readonly rule: string;
      readonly message: string;
      readonly report: StopReport | null;
    };

/**
 * The result as a message for the model. A stop says so plainly and tells what to do instead, so
 * the planner answers with what it has rather than trying the same thing in other words.
 */
export function toModelMessage(r: CallResult): string {
  switch (r.status) {
    case 'executed':
    case 'cached': {
      const body = typeof r.value === 'string' ? r.value : JSON.stringify(r.value ?? null);
      const note = r.status === 'cached' ? r.message : guardNote(r);
      return note === null ? body : `${body}\n\n[loopguard] ${note}`;
    }
    case 'refused':
      return `[loopguard] refused (${r.rule}): ${r.message}`;
    case 'waiting':
      return `[loopguard] wait (${r.rule}): ${r.message}`;
    case 'stopped':
      return `[loopguard] stopped (${r.rule}): ${r.message} No further tool call of this run will execute; reply with your final answer.`;
  }
}

/** What the guard adds to the result of a call that ran: its warning, else its decision when that is not to continue. */
export const guardNote = (r: Extract<CallResult, { status: 'executed' }>): string | null =>
  r.warning ?? (r.decision === 'continue' ? null : r.message);

/** Whether the call did its work: it ran and succeeded, or its side effect was done before (cached). */
export const succeeded = (r: CallResult): r is Extract<CallResult, { status: 'cached' | 'executed' }> =>
  r.status === 'cached' || (r.status === 'executed' && r.kind === 'SUCCESS');

/** A call's rule, and what failed: a tool that ran and did not succeed fails with its code or result class. */
export function callEnd(r: CallResult): CallEnd {
  if (r.status === 'executed')
    return { rule: r.rule, errorType: r.kind === 'SUCCESS' ? null : (r.code ?? r.kind) };
  return { rule: r.status === 'cached' ? null : r.rule, errorType: null };
}

/**
 * A guard decision as a call result needs it, from the records (library) or the wire (remote run);
 * for return_cached_success, `resultJson` is the recorded result handed back (cachedResultJson).
 */
export type CallDecision = Omit<EventOf<'GuardDecided'>, 'type' | 'callId' | 'phase'>;

/**
 * What a call the guard did not let run gives back: cached, waiting, refused or stopped. The one
 * mapping for the library and the remote run, so a decision means the same to both callers.
 */
export function notRunResult(d: CallDecision, run: RunView): CallResult {
  const rule = d.rule ?? d.decision;
  switch (d.decision) {
    case 'return_cached_success':
      return { status: 'cached', value: jsonValue(d.resultJson ?? 'null', d.resultJson), message: d.message };
    case 'wait':
      return { status: 'waiting', rule, message: d.message, waitUntilMs: d.waitUntilMs };
    case 'refuse':
      if (isTerminal(run.status)) return { status: 'stopped', rule, message: d.message, report: run.report };
      return { status: 'refused', rule, message: d.message, evidence: d.evidence };
    default:
      return { status: 'stopped', rule, message: d.message, report: run.report };
  }
}

/** What a call whose tool ran gives back: the tool's value and the guard's decision after it. */
export function executedResult(
  ran: { readonly value: unknown; readonly kind: ResultKind; readonly code: string | null },
  after: CallDecision,
  run: RunView,
): CallResult {
  return {
    status: 'executed',
    value: ran.value,
    kind: ran.kind,
    code: ran.code,
    decision: after.decision,
    rule: after.rule,
    message: after.message,
    warning: after.warning,
    waitUntilMs: after.waitUntilMs,
    // Only this call can have ended the run: a run that had ended runs no tool.
    report: isTerminal(run.status) ? run.report : null,
  };
}

/**
 * The recorded result a cached call hands back: the decision's own, else (records from before
 * decisions carried it) the result of the operation the call named, keyed as recorded: redacted.
 */
export function cachedResultJson(
  d: EventOf<'GuardDecided'>,
  records: readonly RecordedEvent[],
  s: RunState,
): string {
  if (d.resultJson !== null) return d.resultJson;
  const call = records.find((r) => r.event.type === 'ToolCallRequested')?.event;
  const key = call?.type === 'ToolCallRequested' ? call.operationKey : null;
  return (key === null ? null : own(s.operations, key)?.resultJson) ?? 'null';
}

/** A recorded decision as a call result reads it. */
export const recordedDecision = (
  d: EventOf<'GuardDecided'>,
  records: readonly RecordedEvent[],
  s: RunState,
): CallDecision => ({ ...d, resultJson: cachedResultJson(d, records, s) });

/** The guard's decision of one phase among a command's records, if it has one. */
export function decidedIn(
  records: readonly RecordedEvent[],
  phase: 'before' | 'after',
): EventOf<'GuardDecided'> | undefined {
  for (const r of records) if (r.event.type === 'GuardDecided' && r.event.phase === phase) return r.event;
  return undefined;
}

/** The guard's decision of one phase among a command's records. */
export function decision(
  records: readonly RecordedEvent[],
  phase: 'before' | 'after',
): EventOf<'GuardDecided'> {
  const d = decidedIn(records, phase);
  if (d === undefined) throw new LoopguardError('internal', `no ${phase} decision recorded`);
  return d;
}
