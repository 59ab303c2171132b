import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
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
  if (caps.resources) {
    server.setRequestHandler(ListResourcesRequestSchema, (req, extra) =>
      progress.forward(extra, (meta) =>
        upstream.request(
          { method: req.method, params: withMeta(req.params ?? {}, meta) },
          ListResourcesResultSchema,
          { signal: extra.signal },
        ),
      ),
    );
    server.setRequestHandler(ListResourceTemplatesRequestSchema, (req, extra) =>
      progress.forward(extra, (meta) =>
        upstream.request(
          { method: req.method, params: withMeta(req.params ?? {}, meta) },
          ListResourceTemplatesResultSchema,
          { signal: extra.signal },
        ),
      ),
    );
    server.setRequestHandler(ReadResourceRequestSchema, (req, extra) =>
      progress.forward(extra, (meta) =>
        upstream.request(
          { method: req.method, params: withMeta(req.params, meta) },
          ReadResourceResultSchema,
          { signal: extra.signal },
        ),
      ),
    );
    if (caps.resources.subscribe) {
      server.setRequestHandler(SubscribeRequestSchema, (req, extra) =>
        progress.forward(extra, (meta) =>
          upstream.request({ method: req.method, params: withMeta(req.params, meta) }, EmptyResultSchema, {
            signal: extra.signal,
          }),
        ),
      );
      server.setRequestHandler(UnsubscribeRequestSchema, (req, extra) =>
        progress.forward(extra, (meta) =>
          upstream.request({ method: req.method, params: withMeta(req.params, meta) }, EmptyResultSchema, {
            signal: extra.signal,
          }),
        ),
      );
    }
    upstream.setNotificationHandler(ResourceListChangedNotificationSchema, (n) => server.notification(n));
    upstream.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => server.notification(n));
  }
  if (caps.prompts) {
    server.setRequestHandler(ListPromptsRequestSchema, (req, extra) =>
      progress.forward(extra, (meta) =>
        upstream.request(
          { method: req.method, params: withMeta(req.params ?? {}, meta) },
          ListPromptsResultSchema,
          { signal: extra.signal },
        ),
      ),
    );
    server.setRequestHandler(GetPromptRequestSchema, (req, extra) =>
      progress.forward(extra, (meta) =>
        upstream.request({ method: req.method, params: withMeta(req.params, meta) }, GetPromptResultSchema, {
          signal: extra.signal,
        }),
      ),
    );
    upstream.setNotificationHandler(PromptListChangedNotificationSchema, (n) => server.notification(n));
  }
  if (caps.completions)
    server.setRequestHandler(CompleteRequestSchema, (req, extra) =>
      progress.forward(extra, (meta) =>
        upstream.request({ method: req.method, params: withMeta(req.params, meta) }, CompleteResultSchema, {
          signal: extra.signal,
        }),
      ),
    );
  if (caps.logging) {
    server.setRequestHandler(SetLevelRequestSchema, (req, extra) =>
      progress.forward(extra, (meta) =>
        upstream.request({ method: req.method, params: withMeta(req.params, meta) }, EmptyResultSchema, {
          signal: extra.signal,
        }),
      ),
    );
    upstream.setNotificationHandler(LoggingMessageNotificationSchema, (n) => server.notification(n));
  }
}
