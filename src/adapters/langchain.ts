/**
 * loopguard/langchain: the guard as LangChain.js `createAgent` middleware. `wrapToolCall` puts
 * every tool call through the guard and answers a refused or stopped call with a `ToolMessage`
 * carrying the refusal, without calling the tool; `beforeModel` ends the agent once the guard has
 * ended the run and the model has had its turn to answer.
 */
import { createMiddleware, ToolMessage } from 'langchain';
import type { GuardedRun, GuardToolsOptions } from '../runtime/index.js';
import { endAfterStop } from './end-after-stop.js';
import { GuardedCalls } from './guarded-calls.js';
import { toolReply } from './tool-reply.js';

/** The text of a tool message as the guard judges results: identical outputs hash alike. */
const textOf = (m: ToolMessage): string =>
  typeof m.content === 'string' ? m.content : JSON.stringify(m.content);

export function loopguardMiddleware(run: GuardedRun, opts: GuardToolsOptions = {}) {
  const calls = new GuardedCalls(run, opts);
  const end = endAfterStop(run);
  return createMiddleware({
    name: 'loopguard',
    beforeModel: {
      canJumpTo: ['end'],
      hook: () => (end() ? { jumpTo: 'end' } : undefined),
    },
    wrapToolCall: async (request, handler) => {
      const { toolCall } = request;
      let answer: Awaited<ReturnType<typeof handler>> | undefined;
      const r = await calls.execute(toolCall.id, toolCall.name, toolCall.args, async () => {
        answer = await handler(request);
        if (!ToolMessage.isInstance(answer)) return answer;
        // An error the tool node caught is a failed call to the guard, not a result to remember.
        if (answer.status === 'error') throw new Error(textOf(answer));
        return textOf(answer);
      });
      const reply = toolReply(r);
      if (r.status === 'executed' && reply === r.value && answer !== undefined) return answer;
      return new ToolMessage({
        content: typeof reply === 'string' ? reply : JSON.stringify(reply),
        tool_call_id: toolCall.id ?? '',
        name: toolCall.name,
        status: r.status === 'executed' || r.status === 'cached' ? 'success' : 'error',
      });
    },
  });
}
