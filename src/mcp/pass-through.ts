import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  type ClientRequest,
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
  PromptListChangedNotificationSchema,
  ReadResourceRequestSchema,
  ReadResourceResultSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  type ServerCapabilities,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { type UpstreamProgress, withMeta } from './upstream-progress.js';

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

/**
 * Everything but tools passes through as the upstream serves it: resources, resource templates,
 * subscriptions, prompts, completions and logging; and the upstream's list-changed, resource
 * updated and log notifications reach the client. Only tool calls are judged (the proxy's own
 * handlers); these do not act on the world, so the guard has nothing to decide about them.
 */
export function passThrough(
  server: Server,
  upstream: Client,
  caps: ServerCapabilities,
  progress: UpstreamProgress,
): void {
  /** A request the upstream serves: forwarded as the client sent it, its progress routed back. */
  const forward = (
    requestSchema: Parameters<Server['setRequestHandler']>[0],
    resultSchema: Parameters<Client['request']>[1],
  ): void =>
    server.setRequestHandler(requestSchema, (req, extra) =>
      progress.forward(extra, (meta) =>
        upstream.request(
          { method: req.method, params: withMeta(req.params ?? {}, meta) } as ClientRequest,
          resultSchema,
          { signal: extra.signal },
        ),
      ),
    );
  const notify = (schema: Parameters<Client['setNotificationHandler']>[0]): void =>
    upstream.setNotificationHandler(schema, (n) => server.notification(n));
  if (caps.resources) {
    forward(ListResourcesRequestSchema, ListResourcesResultSchema);
    forward(ListResourceTemplatesRequestSchema, ListResourceTemplatesResultSchema);
    forward(ReadResourceRequestSchema, ReadResourceResultSchema);
    if (caps.resources.subscribe) {
      forward(SubscribeRequestSchema, EmptyResultSchema);
      forward(UnsubscribeRequestSchema, EmptyResultSchema);
    }
    notify(ResourceListChangedNotificationSchema);
    notify(ResourceUpdatedNotificationSchema);
  }
  if (caps.prompts) {
    forward(ListPromptsRequestSchema, ListPromptsResultSchema);
    forward(GetPromptRequestSchema, GetPromptResultSchema);
    notify(PromptListChangedNotificationSchema);
  }
  if (caps.completions) forward(CompleteRequestSchema, CompleteResultSchema);
  if (caps.logging) {
    forward(SetLevelRequestSchema, EmptyResultSchema);
    notify(LoggingMessageNotificationSchema);
  }
}
