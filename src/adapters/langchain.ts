/**
 * loopguard/langchain: the guard as LangChain.js `createAgent` middleware. `wrapToolCall` puts
 * every tool call through the guard and answers a refused or stopped call with a `ToolMessage`
 * carrying the refusal, without calling the tool; `beforeModel` ends the agent once the guard has
 * ended the run and the model has had its turn to answer. A human-in-the-loop middleware before
 * it keeps its interrupts: the guard judges a call only when the tool node runs it.
 */
import { createMiddleware, ToolMessage } from 'langchain';
import {
  type CallResult,
  combinedSignal,
  type GuardedRun,
  type GuardToolsOptions,
} from '../runtime/index.js';
import { endAfterStop } from './end-after-stop.js';
import { GuardedCalls } from './guarded-calls.js';
import { toolReply } from './tool-reply.js';

/** The text of a tool message as the guard judges results: identical outputs hash alike. */
const textOf = (m: ToolMessage): string =>
  typeof m.content === 'string' ? m.content : JSON.stringify(m.content);

/** Only a call that did its work is a success; refused, stopped, failed and in doubt are errors. */
const succeeded = (r: CallResult): boolean =>
  r.status === 'cached' || (r.status === 'executed' && r.kind === 'SUCCESS');

type Invocable = { invoke: (input: unknown, config?: { signal?: AbortSignal }) => unknown };

/**
 * The tool, invoked with the guard's step-timeout signal beside the agent's own: the tool node
 * passes the agent's signal only, and a middleware cannot hand the tool another one but through
 * the tool it asks the node to run.
 */
function withSignal<T>(tool: T, signal: AbortSignal): T {
  const invocable = tool as unknown as Invocable | null | undefined;
  if (typeof invocable?.invoke !== 'function') return tool;
  return new Proxy(invocable, {
    get: (t, p, receiver) =>
      p === 'invoke'
        ? (input: unknown, config?: { signal?: AbortSignal }) =>
            t.invoke(input, { ...config, signal: combinedSignal(signal, config?.signal) })
        : Reflect.get(t, p, receiver),
  }) as T;
}

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
      const r = await calls.execute(toolCall.id, toolCall.name, toolCall.args, async (signal) => {
        answer = await handler({ ...request, tool: withSignal(request.tool, signal) });
        if (!ToolMessage.isInstance(answer)) return answer;
        // An error the tool node caught is a failed call to the guard, not a result to remember.
        if (answer.status === 'error') throw new Error(textOf(answer));
        return textOf(answer);
      });
      const reply = toolReply(r);
      if (r.status === 'executed' && succeeded(r) && reply === r.value && answer !== undefined) return answer;
      return new ToolMessage({
        content: typeof reply === 'string' ? reply : JSON.stringify(reply),
        tool_call_id: toolCall.id ?? '',
        name: toolCall.name,
        status: succeeded(r) ? 'success' : 'error',
      });
    },
  });
}
