import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { type Progress, ProgressNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

/** What the proxy knows of the client's request it forwards upstream. */
export interface RequestExtra {
  readonly signal: AbortSignal;
  readonly _meta?: { readonly progressToken?: string | number } | undefined;
  sendNotification(n: {
    method: 'notifications/progress';
    params: Progress & { progressToken: string | number };
  }): Promise<void>;
}

/** The `_meta` of a forwarded request: the client's, with its progress token replaced by the proxy's own (or none). */
export type UpstreamMeta = { readonly progressToken?: string };

/**
 * Routes the upstream's progress notifications to the client request that caused them, under the
 * client's own token. The SDK's own routing (a request's `onprogress`) loses a notification that
 * arrives in one read with its request's answer: the answer is handled at once and retires the
 * token, the notification a microtask later finds none (typescript-sdk#2580; a fast tool read late
 * does exactly this). Here a forwarded request carries a token of the proxy's, and its route
 * outlives the answer by a turn of the event loop, so a notification read with it still goes out,
 * and before the answer (which the proxy sends only after recording the call).
 */
export class UpstreamProgress {
  private next = 0;
  private readonly routes = new Map<string, (p: Progress) => void>();

  constructor(upstream: Client) {
    upstream.setNotificationHandler(ProgressNotificationSchema, (n) => {
      const { progressToken, ...p } = n.params;
      this.routes.get(String(progressToken))?.(p);
    });
  }

  /**
   * Runs `send` (the upstream request) with the `_meta` to give it: a token of the proxy's when the
   * client asked for progress, whose notifications go to the client until a turn after it settles.
   */
  async forward<T>(extra: RequestExtra, send: (meta: UpstreamMeta) => Promise<T>): Promise<T> {
    const token = extra._meta?.progressToken;
    if (token === undefined) return send({});
    const ours = `loopguard-${++this.next}`;
    this.routes.set(ours, (p) => {
      extra
        .sendNotification({ method: 'notifications/progress', params: { ...p, progressToken: token } })
        .catch(() => undefined);
    });
    try {
      return await send({ progressToken: ours });
    } finally {
      setImmediate(() => this.routes.delete(ours));
    }
  }
}

/** `params` with `meta` as its `_meta` (the client's other `_meta` fields kept, its progress token not). */
export function withMeta<P extends { _meta?: unknown }>(params: P, meta: UpstreamMeta): P {
  const { progressToken: _, ...rest } = (params._meta ?? {}) as Record<string, unknown>;
  const merged = { ...rest, ...meta };
  if (Object.keys(merged).length === 0) {
    const { _meta: __, ...bare } = params;
    return bare as P;
  }
  return { ...params, _meta: merged };
}
