import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { type CallToolResult, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { outcome, ToolError, type ToolOutcome } from '../runtime/index.js';

/** What the upstream server answered to one tools/call: a result, or a JSON-RPC error. */
export type UpstreamAnswer =
  | { readonly kind: 'result'; readonly result: CallToolResult }
  | { readonly kind: 'error'; readonly code: number; readonly message: string };

/** The upstream went away or never answered: whether a side effect happened is unknown. */
class UpstreamFailure extends Error {
  constructor(code: string, message: string) {
    super(message);
    // executeTool records an unclassified error's name as its code.
    this.name = code;
  }
}

/** setTimeout's ceiling: "no step timeout" in the policy means the guard never gives up either. */
const NO_TIMEOUT_MS = 2_147_483_647;

/**
 * Calls one tool on the upstream and classifies the answer for the guard, keeping the raw answer
 * for the MCP client in `onAnswer`:
 * - a result is SUCCESS; a result with `isError: true` (the tool's own failure) is PRECONDITION
 *   `tool_error`: the same call is refused until something changes, while other calls go on;
 * - a JSON-RPC InvalidParams or MethodNotFound is PRECONDITION too (the server refused before acting);
 * - a timeout, a closed connection or any other error is unclassified: RETRYABLE for a read, in
 *   doubt for a side effect, never retried blindly.
 */
export async function callUpstream(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  signal: AbortSignal,
  timeoutMs: number | null,
  onAnswer: (a: UpstreamAnswer) => void,
): Promise<CallToolResult | ToolOutcome> {
  let result: CallToolResult;
  try {
    result = (await client.callTool({ name, arguments: args }, undefined, {
      signal,
      timeout: timeoutMs ?? NO_TIMEOUT_MS,
    })) as CallToolResult;
  } catch (e) {
    const code = e instanceof McpError ? e.code : ErrorCode.InternalError;
    const message = e instanceof Error ? e.message : String(e);
    onAnswer({ kind: 'error', code, message });
    if (code === ErrorCode.InvalidParams) throw new ToolError('PRECONDITION', 'invalid_params', message);
    if (code === ErrorCode.MethodNotFound) throw new ToolError('PRECONDITION', 'unknown_tool', message);
    if (code === ErrorCode.RequestTimeout) throw new UpstreamFailure('upstream_timeout', message);
    if (code === ErrorCode.ConnectionClosed) throw new UpstreamFailure('upstream_closed', message);
    throw new UpstreamFailure('upstream_error', message);
  }
  onAnswer({ kind: 'result', result });
  return result.isError === true ? outcome.precondition('tool_error') : result;
}
