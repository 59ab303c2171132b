import { compared } from './compared-calls.js';
import type { EventOf } from './events.js';
import type { RunPolicy } from './policy.js';
import { repeatedFailureVerdict } from './repeated-failure.js';
import type { InFlightCall, RunState } from './run-state.js';
import { evidence, stopVerdict, underAction, type Verdict } from './verdict.js';
import { waitText } from './wait-text.js';

/** Codes of FATAL results a person can resolve (grant, approve, decide); anything else FAILED. */
const HUMAN_CODES = ['permission_denied', 'policy_blocked', 'needs_human'] as const;

const BACKOFF_BASE_MS = 1000;
const BACKOFF_CAP_MS = 60_000;

/** 1 s, 2 s, 4 s ... capped; the server's retry-after wins when it gave one. */
const backoffMs = (attempt: number, retryAfterMs: number | null): number =>
  retryAfterMs ?? Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** Math.max(0, attempt - 1));

/**
 * The guard's answer after a call, judged on the state that already includes its result.
 * `call` is the request the result belongs to.
 */
export function checkAfter(
  s: RunState,
  p: RunPolicy,
  call: InFlightCall,
  e: EventOf<'ToolCallCompleted'>,
  atMs: number,
  inDoubt: boolean,
): Verdict {
  const fp = call.fingerprint;
  const ev = (counts: Record<string, number> = {}, thresholds: Record<string, number> = {}) =>
    evidence([fp], counts, thresholds);
  if (inDoubt) {
    const what =
      call.operationKey === null
        ? `${call.tool} (a side effect without an operation key, call ${call.callId})`
        : `${call.tool} (operation ${call.operationKey})`;
    return stopVerdict(
      'after',
      'in_doubt',
      `Stopped: ${what} may or may not have happened (${e.code ?? 'no answer'}). It is not retried; ${call.operationKey === null ? 'ask the provider or a person' : 'reconcile it with the provider or ask a person'}.`,
      ev(),
      'NEEDS_HUMAN',
      call.operationKey === null
        ? `outcome of ${call.tool} call ${call.callId}`
        : `outcome of operation ${call.operationKey}`,
    );
  }
  switch (e.kind) {
    case 'FATAL': {
      const code = e.code ?? 'fatal';
      const human = (HUMAN_CODES as readonly string[]).includes(code);
      return stopVerdict(
        'after',
        code,
        human
          ? `Stopped: ${call.tool} answered ${code}. A person must grant or decide this; retrying will not change it.`
          : `Failed: ${call.tool} answered ${code}, which no retry can fix.`,
        ev(),
        human ? 'NEEDS_HUMAN' : 'FAILED',
        human ? `${code} for ${call.tool}` : undefined,
      );
    }
    case 'RETRYABLE': {
      const attempt = s.retries[fp] ?? 0;
      if (attempt > p.maxRetries) {
        return stopVerdict(
          'after',
          'retry_exhausted',
          `Stopped: ${call.tool} failed ${attempt} times (${e.code ?? 'retryable'}); the retry budget of ${p.maxRetries} is spent.`,
          ev({ attempts: attempt }, { maxRetries: p.maxRetries }),
        );
      }
      const wait = backoffMs(attempt, e.retryAfterMs);
      return {
        decision: 'retry_after_backoff',
        rule: 'retryable',
        message: `Retry ${call.tool} ${waitText(atMs + wait, atMs)}: attempt ${attempt} of ${p.maxRetries}.`,
        evidence: ev({ attempt }, { maxRetries: p.maxRetries, backoffMs: wait }),
        waitUntilMs: atMs + wait,
      };
    }
    case 'PENDING': {
      const polls = s.polls[fp] ?? 0;
      if (polls > p.maxPolls) {
        return stopVerdict(
          'after',
          'poll_exhausted',
          `Stopped: ${call.tool} stayed pending for ${polls} polls with no change (limit ${p.maxPolls}).`,
          ev({ polls }, { maxPolls: p.maxPolls }),
        );
      }
      const wait = backoffMs(polls + 1, e.retryAfterMs);
      return {
        decision: 'wait_bounded',
        rule: 'pending',
        message: call.sideEffect
          ? `Pending: ${call.tool} was accepted and is under way; ask for its status with a read ${waitText(atMs + wait, atMs)} (calling ${call.tool} again ${call.operationKey === null ? 'may do it again' : 'returns this answer'}).`
          : `Pending: poll ${call.tool} again ${waitText(atMs + wait, atMs)}.`,
        evidence: ev({ polls }, { maxPolls: p.maxPolls, backoffMs: wait }),
        waitUntilMs: atMs + wait,
      };
    }
    case 'PRECONDITION':
      break;
    case 'SUCCESS':
      if (e.terminal) {
        return {
          decision: 'complete',
          rule: 'terminal_success',
          message: `${call.tool} reported the task done.`,
          evidence: ev(),
          terminal: 'COMPLETED',
        };
      }
  }
  const noProgress = noProgressVerdict(s, p) ?? repeatedFailureVerdict(s, p, call.callId);
  if (noProgress !== null) return noProgress;
  if (e.kind === 'PRECONDITION') {
    return {
      decision: 'needs_changed_precondition',
      rule: 'precondition',
      message: `${call.tool} needs a precondition first (${e.code ?? 'precondition'}); the same call is refused until it changes.`,
      evidence: ev(),
      unmetPrecondition: e.code ?? 'precondition',
    };
  }
  return { decision: 'continue', rule: null, message: 'ok', evidence: ev({ noProgress: s.noProgress }) };
}

function noProgressVerdict(s: RunState, p: RunPolicy): Verdict | null {
  if (s.noProgress < p.noProgressLimit) return null;
  const message = s.tracksProgress
    ? `Stopped: the last ${s.noProgress} calls did not raise the progress version (still ${s.progressVersion}; ${compared(s.window.slice(-s.noProgress))}). Change the approach or give your final answer.`
    : `Stopped: the last ${s.noProgress} calls brought no new information (identical results for calls already made: ${compared(s.window.slice(-s.noProgress))}). Change the approach or give your final answer.`;
  const ev = evidence(
    s.window.map((w) => w.fingerprint).filter((f, i, a) => a.indexOf(f) === i),
    { noProgress: s.noProgress },
    { noProgressLimit: p.noProgressLimit },
  );
  return underAction(s, p.rules.no_progress, stopVerdict('after', 'no_progress', message, ev));
}
