import { setTimeout as delay } from 'node:timers/promises';
import { LoopguardError, toLoopguardError, UnavailableError } from '../domain/errors.js';

export interface RetryPolicy {
  /** Wait after the first failure; doubled after each further one. */
  readonly baseMs: number;
  /** The waits stop growing here. */
  readonly maxMs: number;
  /**
   * Failed attempts after which the alert is given up (`alert_undeliverable`: the subscriber puts
   * it on the dead-letter topic and goes on). Absent: retried forever.
   */
  readonly maxAttempts?: number;
}

export const DEFAULT_RETRY: RetryPolicy = { baseMs: 250, maxMs: 30_000 };

/** Sleeps ms, or rejects as soon as the signal aborts. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

const realSleep: Sleep = (ms, signal) =>
  delay(ms, undefined, { signal }).catch(() => {
    throw aborted();
  });

const aborted = () =>
  new UnavailableError('alert_aborted', 'delivery abandoned: the subscriber is shutting down', {});

/** The wait after the n-th failed attempt (n from 1): exponential, capped. */
export function backoffMs(failures: number, p: RetryPolicy): number {
  return Math.min(p.maxMs, p.baseMs * 2 ** Math.max(0, failures - 1));
}

export interface DeliverOptions {
  readonly retry?: RetryPolicy;
  readonly sleep?: Sleep;
  readonly signal?: AbortSignal;
  /** Called between slices of a long wait, so a consumer group keeps this member. */
  readonly heartbeat?: () => Promise<void>;
  /** Longest sleep between two heartbeats. */
  readonly heartbeatEveryMs?: number;
  readonly onRetry?: (failures: number, error: LoopguardError, waitMs: number) => void;
  /**
   * Spreads each wait over [half, all] of it, so senders that failed together do not retry in
   * step (a receiver back from an outage is not hit by all of them at once). Absent: exact waits.
   */
  readonly random?: () => number;
}

/**
 * Runs `attempt` until it succeeds; how many attempts that took. Without `maxAttempts` it never
 * gives up on its own: an alert that is skipped is an alert lost, and the caller must not commit
 * past it. With it, the last failure is `alert_undeliverable` (the caller dead-letters the alert).
 * The signal (shutdown) ends it with `alert_aborted`, leaving the record uncommitted for the next run.
 */
export async function deliverWithRetry(
  attempt: () => Promise<void>,
  opts: DeliverOptions = {},
): Promise<number> {
  const retry = opts.retry ?? DEFAULT_RETRY;
  const sleep = opts.sleep ?? realSleep;
  const slice = opts.heartbeatEveryMs ?? 1000;
  for (let failures = 0; ; ) {
    if (opts.signal?.aborted) throw aborted();
    try {
      await attempt();
      return failures + 1;
    } catch (e) {
      if (opts.signal?.aborted) throw aborted();
      failures++;
      const error = toLoopguardError(e, 'alert_delivery_failed');
      if (retry.maxAttempts !== undefined && failures >= retry.maxAttempts)
        throw new LoopguardError(
          'alert_undeliverable',
          `given up after ${failures} attempts; the last: ${error.code}: ${error.message}`,
          { cause: e, details: { attempts: failures, last: error.code } },
        );
      const exact = backoffMs(failures, retry);
      const wait = opts.random === undefined ? exact : Math.round(exact * (0.5 + opts.random() / 2));
      opts.onRetry?.(failures, error, wait);
      for (let left = wait; left > 0; left -= slice) {
        await sleep(Math.min(slice, left), opts.signal);
        await opts.heartbeat?.();
      }
    }
  }
}
