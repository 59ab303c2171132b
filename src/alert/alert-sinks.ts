import { LoopguardError } from '../domain/errors.js';
import type { Alert } from './fleet-loop-alert.js';

/** Where alerts go. `deliver` resolves once the receiver has the alert, and throws otherwise. */
export interface AlertSink {
  readonly name: string;
  deliver(alert: Alert, signal?: AbortSignal): Promise<void>;
}

/** One JSON line per alert, on the given writer (stdout in the CLI). */
export function stdoutSink(write: (text: string) => void): AlertSink {
  return {
    name: 'stdout',
    deliver: async (alert) => write(`${JSON.stringify(alert)}\n`),
  };
}

export interface WebhookOptions {
  /** Upper bound for one request; kept below the consumer's session timeout. */
  readonly timeoutMs?: number;
  readonly fetch?: typeof fetch;
}

/**
 * An HTTP POST of the alert as JSON. `Idempotency-Key` is the stop's event id: the sender may
 * deliver again after a crash (at-least-once), and that header lets the receiver drop repeats.
 * Any non-2xx answer is a failed delivery, retried by the caller.
 */
export function webhookSink(url: string, opts: WebhookOptions = {}): AlertSink {
  const doFetch = opts.fetch ?? fetch;
  const timeoutMs = opts.timeoutMs ?? 5000;
  return {
    name: `webhook ${url}`,
    async deliver(alert, signal) {
      const timeout = AbortSignal.timeout(timeoutMs);
      let res: Response;
      try {
        res = await doFetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'idempotency-key': alert.event_id },
          body: JSON.stringify(alert),
          signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
        });
      } catch (e) {
        throw new LoopguardError(
          'webhook_unreachable',
          `POST ${url}: ${e instanceof Error ? e.message : String(e)}`,
          {
            cause: e,
            retriable: true,
          },
        );
      }
      const text = await res.text().catch(() => '');
      if (!res.ok)
        throw new LoopguardError('webhook_refused', `POST ${url}: HTTP ${res.status} ${text.slice(0, 200)}`, {
          retriable: true,
          details: { status: res.status },
        });
    },
  };
}
