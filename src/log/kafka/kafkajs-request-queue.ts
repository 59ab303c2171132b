/**
 * A contained fix of kafkajs 2.2.4's request queue (its issue #1751), applied to the one method
 * at fault, on the class kafkajs itself loads (never by editing node_modules).
 *
 * After every response kafkajs calls `scheduleCheckPendingRequests`, which, with nothing pending
 * and no throttle, arms `setTimeout(check, throttledUntil - Date.now())`: a negative delay. Node 24
 * prints `TimeoutNegativeWarning` for it and runs it after 1 ms, whose check arms the next one, so
 * every broker connection wakes up every millisecond. The fixed method arms a timer only when a
 * request is waiting (at the throttle's end, or after kafkajs's own 10 ms re-check interval), as
 * upstream does whenever something is pending; nothing else of kafkajs changes.
 */
import { createRequire } from 'node:module';

/** kafkajs's private re-check interval for a queue that is waiting (requestQueue/index.js). */
const CHECK_PENDING_REQUESTS_INTERVAL_MS = 10;

interface RequestQueueInternals {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
}

/** What the faulty method looks like: the fix is applied only to the code it was written for. */
const FAULTY = /let scheduleAt = this\.throttledUntil - Date\.now\(\)[\s\S]*setTimeout\([\s\S]*scheduleAt\)/;

function scheduleCheckPendingRequests(this: RequestQueueInternals): void {
  if (this.throttleCheckTimeoutId || this.pending.length === 0) return;
  const untilThrottleEnds = this.throttledUntil - Date.now();
  this.throttleCheckTimeoutId = setTimeout(
    () => {
      this.throttleCheckTimeoutId = null;
      this.checkPendingRequests();
    },
    untilThrottleEnds > 0 ? untilThrottleEnds : CHECK_PENDING_REQUESTS_INTERVAL_MS,
  );
}

/** What applying a contained fix of kafkajs did: a later call after it applied says `already`. */
export type KafkajsFix = 'applied' | 'already' | 'not-needed';

/**
 * `fix` applied once per process (every path that makes a kafkajs client calls it first), on the
 * classes kafkajs itself loads; a kafkajs it was not written for (a later release) is left alone
 * (`fix` returns false: `not-needed`).
 */
export function oncePerProcess(fix: (require: NodeJS.Require) => boolean): () => KafkajsFix {
  let outcome: KafkajsFix | undefined;
  return () => {
    if (outcome !== undefined) return outcome === 'applied' ? 'already' : outcome;
    outcome = fix(createRequire(import.meta.url)) ? 'applied' : 'not-needed';
    return outcome;
  };
}

/** Replaces the faulty method. */
export const fixKafkajsRequestQueue = oncePerProcess((require) => {
  const RequestQueue = require('kafkajs/src/network/requestQueue/index.js') as {
    prototype: RequestQueueInternals;
  };
  const current = RequestQueue.prototype.scheduleCheckPendingRequests;
  if (typeof current !== 'function' || !FAULTY.test(current.toString())) return false;
  RequestQueue.prototype.scheduleCheckPendingRequests = scheduleCheckPendingRequests;
  return true;
});
