/**
 * Every HTTP request loopguard sends to a schema registry. Each attempt has a deadline: a registry
 * that never answers (seen on a loaded Apicurio) would otherwise hold a decode, a worker's batch
 * or a command forever. No answer, a timeout or HTTP 5xx/429 is retried a few times with backoff,
 * then given up as a retriable `registry_unavailable`, so a caller with its own retry asks later.
 */
import { UnavailableError } from '../domain/errors.js';

export const REGISTRY_CONTENT_TYPE = 'application/vnd.schemaregistry.v1+json';

export interface RegistryRequestOptions {
  /** Deadline of one attempt (default 10 s). */
  readonly timeoutMs?: number;
  /** Attempts in all (default 3). */
  readonly attempts?: number;
}

/** A registry answer that is worth asking again for. */
const transient = (status: number): boolean => status >= 500 || status === 429;

/**
 * The registry's answer to `method url` (with `body` as JSON), whatever its status but a transient
 * one; `what` names the request in the error a caller sees.
 */
export async function registryRequest(
  url: string,
  what: string,
  init: { readonly method?: 'GET' | 'POST' | 'PUT'; readonly body?: unknown } = {},
  { timeoutMs = 10_000, attempts = 3 }: RegistryRequestOptions = {},
): Promise<Response> {
  const headers: Record<string, string> = { Accept: REGISTRY_CONTENT_TYPE };
  if (init.body !== undefined) headers['Content-Type'] = REGISTRY_CONTENT_TYPE;
  let last: UnavailableError | undefined;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    if (attempt > 1) await new Promise((r) => setTimeout(r, 100 * 2 ** (attempt - 2)));
    try {
      const res = await fetch(url, {
        method: init.method ?? 'GET',
        headers,
        ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (!transient(res.status)) return res;
      last = await unexpectedAnswer(what, res, true);
    } catch (e) {
      const timedOut = e instanceof Error && e.name === 'TimeoutError';
      last = new UnavailableError(
        'registry_unavailable',
        `${what}: the registry at ${new URL(url).origin} ${timedOut ? `did not answer within ${timeoutMs} ms` : 'did not answer'}`,
        { cause: e },
      );
    }
  }
  throw last as UnavailableError;
}

/** An answer the caller did not expect: an error naming it, not retriable unless the answer is transient. */
export async function unexpectedAnswer(
  what: string,
  res: Response,
  retriable = false,
): Promise<UnavailableError> {
  return new UnavailableError('registry_unavailable', `${what}: HTTP ${res.status} ${await res.text()}`, {
    retriable,
    details: { status: res.status },
  });
}
