import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { type CallResult, guardNote, toModelMessage } from '../runtime/index.js';
import type { UpstreamAnswer } from './upstream-call.js';

const text = (t: string) => ({ type: 'text' as const, text: t });

const withNote = (result: CallToolResult, note: string | null): CallToolResult =>
  note === null ? result : { ...result, content: [...(result.content ?? []), text(`[loopguard] ${note}`)] };

const isToolResult = (v: unknown): v is CallToolResult =>
  typeof v === 'object' && v !== null && Array.isArray((v as { content?: unknown }).content);

/**
 * What the MCP client gets for one guarded tools/call. A call that ran returns the upstream's own
 * answer unchanged (its errors included, as `isError` results), with the guard's note appended
 * when it has something to say (a warning, a backoff, the stop this call caused). A call that did
 * not run is an `isError` result whose text starts with `[loopguard]`, so the model sees why and
 * can change course; a side effect already done comes back from the ledger with a note.
 */
export function toMcpToolResult(r: CallResult, answer: UpstreamAnswer | undefined): CallToolResult {
  switch (r.status) {
    case 'executed': {
      const note = guardNote(r);
      if (answer?.kind === 'result') return withNote(answer.result, note);
      const failure =
        answer?.kind === 'error'
          ? `upstream error ${answer.code}: ${answer.message}`
          : `[loopguard] the upstream did not answer (${r.code ?? r.kind})`;
      return withNote({ isError: true, content: [text(failure)] }, note);
    }
    case 'cached':
      return withNote(
        isToolResult(r.value) ? r.value : { content: [text(JSON.stringify(r.value))] },
        r.message,
      );
    default:
      return { isError: true, content: [text(toModelMessage(r))] };
  }
}

/** The guard could not decide (the log refused the decision, arguments it cannot fingerprint): nothing ran. */
export const guardErrorResult = (e: { readonly code: string; readonly message: string }): CallToolResult => ({
  isError: true,
  content: [text(`[loopguard] ${e.code}: ${e.message}`)],
});
