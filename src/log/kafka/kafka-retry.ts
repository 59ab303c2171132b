/**
 * The one retry policy of the Kafka adapter: what Kafka marks retriable (a leader moved or being
 * elected, a coordinator moved or loading, a broker restarting) is tried again with bounded
 * exponential backoff until a deadline; anything else fails at once. kafkajs retries some of it
 * itself but not all: its admin `fetchTopicOffsets` gives up on the first NOT_LEADER_OR_FOLLOWER.
 *
 * Only reads and admin requests go through here. An append is not retried above kafkajs: its
 * idempotent producer retries with the same sequence numbers, and a new send after it gave up
 * could write the records twice.
 */
import { errorOf, LoopguardError } from '../../domain/errors.js';
import { kafkaError } from './kafka-error.js';

export interface KafkaRetryPolicy {
  /** The first backoff; each next one doubles, up to maxBackoffMs. */
  readonly initialBackoffMs: number;
  readonly maxBackoffMs: number;
  /** No attempt starts after this long since the first one. */
  readonly deadlineMs: number;
}

/** A broker restart takes seconds on a small machine; a leader election, well under one. */
export const KAFKA_RETRY: KafkaRetryPolicy = {
  initialBackoffMs: 50,
  maxBackoffMs: 1_000,
  deadlineMs: 30_000,
};

/** The policy with its deadline cut to `ms` (a caller's own timeout), never lengthened. */
export const retryWithin = (ms: number): KafkaRetryPolicy => ({
  ...KAFKA_RETRY,
  deadlineMs: Math.min(KAFKA_RETRY.deadlineMs, ms),
});

/** A retriable failure that is about to be tried again (for logs, metrics and tests). */
export interface KafkaRetry {
  readonly what: string;
  readonly attempt: number;
  readonly error: unknown;
  readonly backoffMs: number;
}

/** Time as the policy sees it: injected, so a test can run the backoff without waiting. */
interface RetryClock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export interface RetryOptions {
  readonly policy?: KafkaRetryPolicy;
  readonly onRetry?: (r: KafkaRetry) => void;
  readonly signal?: AbortSignal;
  readonly clock?: RetryClock;
  /** In [0, 1): spreads the backoff by -20% to +20%. Math.random by default. */
  readonly random?: () => number;
}

interface FlaggedError {
  readonly name?: unknown;
  readonly retriable?: unknown;
  readonly cause?: unknown;
  readonly originalError?: unknown;
}

/**
 * Whether Kafka (through kafkajs's flag on its errors, taken from the protocol's error table)
 * says the same request may succeed later. A kafkajs "retries exceeded" is judged by what it
 * gave up on. Our own timeouts are not retried: the time they allow is already spent.
 */
export function isRetriableKafkaError(e: unknown): boolean {
  for (let cur = e, depth = 0; cur !== null && typeof cur === 'object' && depth < 5; depth++) {
    if (cur instanceof LoopguardError) {
      if (cur.code !== 'kafka_unavailable') return false;
      cur = cur.cause;
      continue;
    }
    const f = cur as FlaggedError;
    if (typeof f.name !== 'string' || !f.name.startsWith('KafkaJS')) return false;
    if (f.name === 'KafkaJSNumberOfRetriesExceeded') {
      cur = f.cause ?? f.originalError;
      continue;
    }
    return f.retriable === true;
  }
  return false;
}

const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

const REAL_CLOCK: RetryClock = { now: () => performance.now(), sleep };

/**
 * Runs `work` (attempt 1, 2, ...) until it resolves, fails with what Kafka does not mark
 * retriable, or the policy's deadline passes; the last failure leaves as a LoopguardError naming
 * `what` and the attempts made.
 */
export async function withKafkaRetry<T>(
  what: string,
  work: (attempt: number) => Promise<T>,
  opts: RetryOptions = {},
): Promise<T> {
  const policy = opts.policy ?? KAFKA_RETRY;
  const clock = opts.clock ?? REAL_CLOCK;
  const random = opts.random ?? Math.random;
  const started = clock.now();
  for (let attempt = 1; ; attempt++) {
    try {
      return await work(attempt);
    } catch (e) {
      const backoff = Math.min(policy.maxBackoffMs, policy.initialBackoffMs * 2 ** (attempt - 1));
      // A little jitter, so clients that failed together do not come back together.
      const backoffMs = Math.round(backoff * (0.8 + 0.4 * random()));
      const late = clock.now() - started + backoffMs > policy.deadlineMs;
      if (!isRetriableKafkaError(e) || late || opts.signal?.aborted) {
        const err = kafkaError(e, what);
        if (attempt === 1) throw err;
        throw errorOf(err.code, `${err.message} (after ${attempt} attempts)`, {
          cause: err.cause,
          retriable: err.retriable,
          details: { ...err.details, attempts: attempt },
        });
      }
      opts.onRetry?.({ what, attempt, error: e, backoffMs });
      await clock.sleep(backoffMs, opts.signal);
    }
  }
}
