import { type CallResult, guardNote, ToolError, toModelMessage } from '../runtime/index.js';

/** What the Claude adapter's hooks and its in-process MCP tools share about a tool's result. */

/** An MCP `CallToolResult`, as far as the guard reads and writes it. */
export interface ToolReply {
  readonly content?: readonly unknown[];
  readonly isError?: boolean;
  readonly [k: string]: unknown;
}
export const asToolReply = (v: unknown): ToolReply | null =>
  typeof v === 'object' && v !== null && Array.isArray((v as ToolReply).content) ? (v as ToolReply) : null;

/** What the guard adds to a result the tool gave, if anything: a warning, or the decision after it. */
export function noteOf(r: CallResult): string | null {
  if (r.status !== 'executed') return toModelMessage(r);
  const note = guardNote(r);
  return note === null ? null : `[loopguard] ${note}`;
}

/** An error text of a tool reply, for the failure the guard records. */
export const errorText = (r: ToolReply): string =>
  (r.content ?? [])
    .map((c) => (typeof (c as { text?: unknown }).text === 'string' ? (c as { text: string }).text : ''))
    .join('\n') || 'tool error';

/**
 * A tool that answered with an error (a command's exit code, a file not found, a tool reply with
 * `isError`): a precondition the call lacks, not a success and not a reason to retry it as it is.
 * The guard then refuses the same call until something new has come in (a call with a new result).
 */
export const toolFailed = (message: string): ToolError =>
  new ToolError('PRECONDITION', 'tool_error', message);
