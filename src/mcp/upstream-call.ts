import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { type CallToolResult, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { outcome, ToolError, type ToolOutcome } from '../runtime/index.js';
import { storedResult, type TruncatedResult } from './stored-result.js';
import type { UpstreamMeta } from './upstream-progress.js';

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

export interface UpstreamCallOptions {
  /** The guard's step signal and the client's cancel, combined. */
  readonly signal: AbortSignal;
  /** The client's own cancel: a call it aborts is recorded `cancelled`, not as a failure of the server. */
  readonly cancelled: AbortSignal;
  readonly timeoutMs: number | null;
  /** The request's `_meta`: the proxy's progress token when the client asked for progress (UpstreamProgress). */
  readonly meta: UpstreamMeta;
  readonly onAnswer: (a: UpstreamAnswer) => void;
}

/**
 * Calls one tool on the upstream and classifies the answer for the guard, keeping the raw answer
 * for the MCP client in `onAnswer`:
 * - a result is SUCCESS (stored truncated with its hash when large, see storedResult); a result
 *   with `isError: true` (the tool's own failure) is PRECONDITION `tool_error`: the same call is
 *   refused until something changes, while other calls go on;
 * - a JSON-RPC InvalidParams or MethodNotFound is PRECONDITION too (the server refused before acting);
 * - the client's cancel is `cancelled`, a timeout, a closed connection or any other error is
 *   unclassified: RETRYABLE for a read, in doubt for a side effect (the server may have acted
 *   before it heard the cancel), never retried blindly.
 */
export async function callUpstream(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  o: UpstreamCallOptions,
): Promise<CallToolResult | TruncatedResult | ToolOutcome> {
  let result: CallToolResult;
  try {
    result = (await client.callTool(
      { name, arguments: args, ...(o.meta.progressToken === undefined ? {} : { _meta: o.meta }) },
      undefined,
      { signal: o.signal, timeout: o.timeoutMs ?? NO_TIMEOUT_MS },
    )) as CallToolResult;
  } catch (e) {
    const code = e instanceof McpError ? e.code : ErrorCode.InternalError;
    const message = e instanceof Error ? e.message : String(e);
    if (o.cancelled.aborted) {
      const cancelled = 'the MCP client cancelled the call';
      o.onAnswer({ kind: 'error', code: ErrorCode.RequestTimeout, message: cancelled });
      throw new UpstreamFailure('cancelled', cancelled);
    }
    if (code === ErrorCode.ConnectionClosed) {
      o.onAnswer({ kind: 'error', code, message: 'the upstream MCP server exited during the call' });
      throw new UpstreamFailure('upstream_exited', message);
    }
    o.onAnswer({ kind: 'error', code, message });
    if (code === ErrorCode.InvalidParams) throw new ToolError('PRECONDITION', 'invalid_params', message);
    if (code === ErrorCode.MethodNotFound) throw new ToolError('PRECONDITION', 'unknown_tool', message);
    if (code === ErrorCode.RequestTimeout) throw new UpstreamFailure('upstream_timeout', message);
    throw new UpstreamFailure('upstream_error', message);
  }
  o.onAnswer({ kind: 'result', result });
  return result.isError === true ? outcome.precondition('tool_error') : storedResult(result);
}
