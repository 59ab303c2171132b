/**
 * Foreign errors are mapped at the edge: whatever kafkajs throws leaves this adapter as a
 * LoopguardError. kafkajs marks its errors `retriable` (leader moved, broker restarting), which is
 * exactly the flag callers need to decide between retrying and giving up.
 */
import { LoopguardError, UnavailableError } from '../../domain/errors.js';

export function kafkaError(e: unknown, what: string): LoopguardError {
  if (e instanceof LoopguardError) return e;
  const message = e instanceof Error ? e.message : String(e);
  const retriable =
    e !== null && typeof e === 'object' && 'retriable' in e && typeof e.retriable === 'boolean'
      ? e.retriable
      : true;
  const name = e instanceof Error ? e.name : 'unknown';
  return new UnavailableError('kafka_unavailable', `${what}: ${message}`, {
    cause: e,
    retriable,
    details: { kafkaError: name },
  });
}

/**
 * Rejects with a retriable `kafka_timeout` if `work` does not settle in time. kafkajs retries a
 * missing partition leader or an unreachable broker for a long while; an append or read that
 * waits on it must not hang its caller forever.
 */
export async function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new UnavailableError('kafka_timeout', `${what}: no answer in ${ms} ms`)),
      ms,
    );
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Waits for `work` to settle, at most `ms`. */
export async function waitAtMost(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([work, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * kafkajs header values may be Buffers, strings or arrays of both; the port carries strings.
 * `only`: just these headers (a reader that needs a few of them converts no others).
 */
export function headersToStrings(
  headers: Record<string, Buffer | string | (Buffer | string)[] | undefined> | undefined,
  only?: readonly string[],
): Record<string, string> | undefined {
  if (!headers) return undefined;
  const out: Record<string, string> = {};
  let any = false;
  const take = (k: string) => {
    const v = headerString(headers[k]);
    if (v === undefined) return;
    out[k] = v;
    any = true;
  };
  if (only !== undefined) for (const k of only) take(k);
  // for-in, not Object.entries: this runs for every record read (a rebuild reads them all).
  else for (const k in headers) take(k);
  return any ? out : undefined;
}

function headerString(v: Buffer | string | (Buffer | string)[] | undefined): string | undefined {
  if (v === undefined) return undefined;
  const last = Array.isArray(v) ? v[v.length - 1] : v;
  if (last === undefined) return undefined;
  return typeof last === 'string' ? last : last.toString();
}
