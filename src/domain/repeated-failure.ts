import { compared } from './compared-calls.js';
import type { RunPolicy } from './policy.js';
import type { FailureSeen, RunState } from './run-state.js';
import { evidence, stopVerdict, underAction, type Verdict } from './verdict.js';

/**
 * The same failure returned three times since anything changed is no progress, however the calls
 * that got it were worded: the world answered the same whatever was asked. This is stronger
 * evidence than three identical calls, and catches what they miss (a message re-sent with another
 * subject, a booking retried with other numbers, all refused alike). A call that may have changed
 * the world (a new call answered with nothing) or news from outside starts every count over, so
 * an edit, then the same failing test, then another edit is work, not a loop.
 */
const SAME_FAILURE_LIMIT = 3;
/** Failures remembered at once: a run rarely fails more ways than this between changes. */
const FAILURES_CAP = 8;

export function failuresAfter(
  failures: readonly FailureSeen[],
  callId: string,
  result: string,
  failed: boolean,
  changed: boolean,
): readonly FailureSeen[] {
  if (changed) return failures.length === 0 ? failures : [];
  if (!failed) return failures;
  const seen = failures.find((f) => f.result === result);
  const rest = failures.filter((f) => f.result !== result);
  if (rest.length >= FAILURES_CAP) rest.splice(0, rest.length - FAILURES_CAP + 1);
  rest.push({ result, callIds: [...(seen?.callIds ?? []).slice(-SAME_FAILURE_LIMIT + 1), callId] });
  return rest;
}

/** Stops once the call just completed returned a failure for the third time since the last change. */
export function repeatedFailureVerdict(s: RunState, p: RunPolicy, callId: string): Verdict | null {
  const last = s.failures[s.failures.length - 1];
  if (last === undefined || last.callIds.length < SAME_FAILURE_LIMIT || last.callIds.at(-1) !== callId)
    return null;
  const calls = last.callIds.map((id) => ({ callId: id, result: last.result }));
  const message = `Stopped: the same failure came back ${last.callIds.length} times since anything changed (${compared(calls)}). Asking again in other words will not help: change what causes it or give your final answer.`;
  const ev = evidence(
    s.window.filter((w) => last.callIds.includes(w.callId)).map((w) => w.fingerprint),
    { sameFailure: last.callIds.length },
    { sameFailureLimit: SAME_FAILURE_LIMIT },
  );
  return underAction(s, p.rules.no_progress, stopVerdict('after', 'repeated_failure', message, ev));
}
