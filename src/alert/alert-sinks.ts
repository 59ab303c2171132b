import { LoopguardError, UnavailableError } from '../domain/errors.js';
import type { Alert } from './fleet-loop-alert.js';

/** Where alerts go. `deliver` resolves once the receiver has the alert, and throws otherwise. */
export interface AlertSink {
  readonly name: string;
  deliver(alert: Alert, signal?: AbortSignal): Promise<void>;
}

/** One JSON line per alert, on the given writer (stdout in the CLI). */
export function stdoutSink(write: (text: string) => void): AlertSink {
  return { name: 'stdout', deliver: async (alert) => write(`${JSON.stringify(alert)}\n`) };
}

export interface WebhookOptions {
  /** Upper bound for one request; kept below the consumer's session timeout. */
  readonly timeoutMs?: number;
  readonly fetch?: typeof fetch;
  /** Sent with every request: where credentials go (never in the URL). */
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * An HTTP POST of the alert as JSON. `Idempotency-Key` is the stop's event id: the sender may
 * deliver again after a crash (at-least-once), and that header lets the receiver drop repeats.
 * Any non-2xx answer is a failed delivery, retried by the caller; a redirect too: followed, a POST
 * would become a bodyless GET whose 200 says nothing of the alert. A URL with credentials
 * (`user:pass@`) is refused here, before anything starts: fetch cannot send it, and it would be
 * printed; credentials go in `headers`.
 */
export function webhookSink(url: string, opts: WebhookOptions = {}): AlertSink {
  const doFetch = opts.fetch ?? fetch;
  const timeoutMs = opts.timeoutMs ?? 5000;
  if (!URL.canParse(url))
    throw new LoopguardError('bad_webhook', 'the webhook is not a URL', { details: { field: 'webhook' } });
  const parsed = new URL(url);
  // The URL as logs and errors show it: no user info, no query (either may carry a secret).
  const shown = `${parsed.origin}${parsed.pathname}`;
  if (parsed.username !== '' || parsed.password !== '')
    throw new LoopguardError(
      'webhook_credentials',
      `the webhook URL ${shown} carries credentials (user:password@): they would be logged and fetch refuses them; send them as a header instead (alert --webhook-header "Authorization: Basic ...")`,
      { details: { field: 'webhook' } },
    );
  return {
    name: `webhook ${shown}`,
    async deliver(alert, signal) {
      const timeout = AbortSignal.timeout(timeoutMs);
      let res: Response;
      try {
        res = await doFetch(url, {
          method: 'POST',
          headers: { ...opts.headers, 'content-type': 'application/json', 'idempotency-key': alert.event_id },
          body: JSON.stringify(alert),
          redirect: 'manual',
          signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
        });
      } catch (e) {
        throw new UnavailableError(
          'webhook_unreachable',
          `POST ${shown}: ${e instanceof Error ? e.message : String(e)}`,
          { cause: e },
        );
      }
      const text = await res.text().catch(() => '');
      if (res.status >= 300 && res.status < 400)
        throw new UnavailableError(
          'webhook_redirected',
          `POST ${shown}: HTTP ${res.status} (a redirect is not a delivery: point --webhook at where it leads)`,
          { details: { status: res.status } },
        );
      if (!res.ok)
        throw new UnavailableError(
          'webhook_refused',
          `POST ${shown}: HTTP ${res.status} ${text.slice(0, 200)}`,
          { details: { status: res.status } },
        );
    },
  };
}
