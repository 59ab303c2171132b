import { type CallResult, combinedSignal, toModelMessage } from '../runtime/index.js';
import { asToolReply, errorText, noteOf, type ToolReply, toolFailed } from './claude-tool-result.js';
import type { GuardedCalls } from './guarded-calls.js';

/** A tool of an in-process MCP server, as `tool()` makes it (the SDK's `SdkMcpToolDefinition`). */
export interface ClaudeMcpTool {
  readonly name: string;
  readonly handler: (args: never, extra: unknown) => Promise<unknown>;
}

const text = (t: string) => ({ type: 'text', text: t });

/** The reply of a guarded in-process MCP tool: its own where it ran, else the guard's. */
function mcpReply(r: CallResult, own: ToolReply | null): ToolReply {
  const note = noteOf(r);
  if (r.status === 'executed' && own !== null)
    return note === null ? own : { ...own, content: [...(own.content ?? []), text(note)] };
  if (r.status === 'cached') {
    // The first call's reply, as recorded: the model reads what was done, and that it was not done again.
    const first = asToolReply(r.value);
    const said = text(`[loopguard] ${r.message}`);
    return first === null
      ? { content: [text(toModelMessage(r))] }
      : { ...first, content: [...(first.content ?? []), said] };
  }
  return { content: [text(toModelMessage(r))], isError: true };
}

/** The tool use an in-process MCP call belongs to: Claude Code sends its id in the request's `_meta`. */
const toolUseIdOf = (extra: unknown): string | undefined => {
  const id = (extra as { _meta?: Record<string, unknown> } | null)?._meta?.['claudecode/toolUseId'];
  return typeof id === 'string' ? id : undefined;
};

/**
 * The options of `createSdkMcpServer` with every tool's handler run by the guard, under the name
 * the model calls it (`mcp__<server>__<tool>`). `hooks.inProcess` learns each such name (the
 * hooks then only decide; the handler records), `hooks.running` each tool use the handler records.
 */
export function guardedMcpServer<
  S extends { readonly name: string; readonly tools?: readonly ClaudeMcpTool[] },
>(
  server: S,
  calls: GuardedCalls,
  hooks: { inProcess(name: string): void; running(toolUseId: string): void },
): S {
  if (server.tools === undefined) return server;
  const tools = server.tools.map((t) => {
    const name = `mcp__${server.name}__${t.name}`;
    hooks.inProcess(name);
    const handler = t.handler as (args: unknown, extra: unknown) => Promise<unknown>;
    return {
      ...t,
      handler: async (args: unknown, extra: unknown) => {
        const id = toolUseIdOf(extra);
        if (id !== undefined) hooks.running(id);
        let own: ToolReply | null = null;
        const r = await calls.execute(id, name, args, async (signal) => {
          const callerSignal = (extra as { signal?: AbortSignal } | null)?.signal;
          const reply = await handler(args, {
            ...(extra as object),
            signal: combinedSignal(signal, callerSignal),
          });
          own = asToolReply(reply);
          if (own?.isError === true) throw toolFailed(errorText(own));
          return reply;
        });
        return mcpReply(r, own);
      },
    };
  });
  return { ...server, tools } as typeof server;
}
