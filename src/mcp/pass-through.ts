import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CompleteRequestSchema,
  CompleteResultSchema,
  EmptyResultSchema,
  GetPromptRequestSchema,
  GetPromptResultSchema,
  ListPromptsRequestSchema,
  ListPromptsResultSchema,
  ListResourcesRequestSchema,
  ListResourcesResultSchema,
  ListResourceTemplatesRequestSchema,
  ListResourceTemplatesResultSchema,
  LoggingMessageNotificationSchema,
  type Progress,
  PromptListChangedNotificationSchema,
  ReadResourceRequestSchema,
  ReadResourceResultSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  type ServerCapabilities,
  type ServerNotification,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';

/** What the proxy advertises: the upstream's own capabilities; tools always (they are what it guards). */
export function proxiedCapabilities(upstream: ServerCapabilities | undefined): ServerCapabilities {
  const u = upstream ?? {};
  return {
    tools: { listChanged: true },
    ...(u.resources ? { resources: u.resources } : {}),
    ...(u.prompts ? { prompts: u.prompts } : {}),
    ...(u.completions ? { completions: u.completions } : {}),
    ...(u.logging ? { logging: u.logging } : {}),
  };
}

interface RequestExtra {
  readonly signal: AbortSignal;
  readonly _meta?: { readonly progressToken?: string | number } | undefined;
  sendNotification(n: ServerNotification): Promise<void>;
}

/**
 * The options of a request forwarded upstream on behalf of the client's request: the client's
 * cancel cancels it, and the upstream's progress reaches the client under the client's own
 * progress token (the SDK gives the upstream request a token of its own).
 */
export function forwardedOptions(extra: RequestExtra, timeoutMs?: number): RequestOptions {
  const token = extra._meta?.progressToken;
  return {
    signal: extra.signal,
    ...(timeoutMs !== undefined ? { timeout: timeoutMs } : {}),
    ...(token === undefined
      ? {}
      : {
          resetTimeoutOnProgress: false,
          onprogress: (p: Progress) =>
            void extra
              .sendNotification({ method: 'notifications/progress', params: { ...p, progressToken: token } })
              .catch(() => undefined),
        }),
  };
}

/** The client's params without its progress token: the upstream request gets the SDK's own. */
function paramsOf<P extends { _meta?: unknown }>(params: P): P {
  const meta = params._meta as Record<string, unknown> | undefined;
  if (meta === undefined || !('progressToken' in meta)) return params;
  const { progressToken: _, ...rest } = meta;
  return { ...params, _meta: rest };
}

/**
 * Everything but tools passes through as the upstream serves it: resources, resource templates,
 * subscriptions, prompts, completions and logging; and the upstream's list-changed, resource
 * updated and log notifications reach the client. Only tool calls are judged (the proxy's own
 * handlers); these do not act on the world, so the guard has nothing to decide about them.
 */
export function passThrough(server: Server, upstream: Client, caps: ServerCapabilities): void {
  if (caps.resources) {
    server.setRequestHandler(ListResourcesRequestSchema, (req, extra) =>
      upstream.request(
        { method: req.method, params: paramsOf(req.params ?? {}) },
        ListResourcesResultSchema,
        forwardedOptions(extra),
      ),
    );
    server.setRequestHandler(ListResourceTemplatesRequestSchema, (req, extra) =>
      upstream.request(
        { method: req.method, params: paramsOf(req.params ?? {}) },
        ListResourceTemplatesResultSchema,
        forwardedOptions(extra),
      ),
    );
    server.setRequestHandler(ReadResourceRequestSchema, (req, extra) =>
      upstream.request(
        { method: req.method, params: paramsOf(req.params) },
        ReadResourceResultSchema,
        forwardedOptions(extra),
      ),
    );
    if (caps.resources.subscribe) {
      server.setRequestHandler(SubscribeRequestSchema, (req, extra) =>
        upstream.request(
          { method: req.method, params: req.params },
          EmptyResultSchema,
          forwardedOptions(extra),
        ),
      );
      server.setRequestHandler(UnsubscribeRequestSchema, (req, extra) =>
        upstream.request(
          { method: req.method, params: req.params },
          EmptyResultSchema,
          forwardedOptions(extra),
        ),
      );
    }
    upstream.setNotificationHandler(ResourceListChangedNotificationSchema, (n) => server.notification(n));
    upstream.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => server.notification(n));
  }
  if (caps.prompts) {
    server.setRequestHandler(ListPromptsRequestSchema, (req, extra) =>
      upstream.request(
        { method: req.method, params: paramsOf(req.params ?? {}) },
        ListPromptsResultSchema,
        forwardedOptions(extra),
      ),
    );
    server.setRequestHandler(GetPromptRequestSchema, (req, extra) =>
      upstream.request(
        { method: req.method, params: paramsOf(req.params) },
        GetPromptResultSchema,
        forwardedOptions(extra),
      ),
    );
    upstream.setNotificationHandler(PromptListChangedNotificationSchema, (n) => server.notification(n));
  }
  if (caps.completions)
    server.setRequestHandler(CompleteRequestSchema, (req, extra) =>
      upstream.request(
        { method: req.method, params: req.params },
        CompleteResultSchema,
        forwardedOptions(extra),
      ),
    );
  if (caps.logging) {
    server.setRequestHandler(SetLevelRequestSchema, (req, extra) =>
      upstream.request(
        { method: req.method, params: req.params },
        EmptyResultSchema,
        forwardedOptions(extra),
      ),
    );
    upstream.setNotificationHandler(LoggingMessageNotificationSchema, (n) => server.notification(n));
  }
}
