import { ToolMessage } from '@langchain/core/messages';
import { combinedSignal, succeeded } from '../runtime/index.js';
import type { GuardedCalls } from './guarded-calls.js';
import { toolReply } from './tool-reply.js';

/** The text of a tool message as the guard judges results: identical outputs hash alike. */
const textOf = (m: ToolMessage): string =>
  typeof m.content === 'string' ? m.content : JSON.stringify(m.content);

type Invocable = { invoke: (input: unknown, config?: { signal?: AbortSignal }) => unknown };

/**
 * The tool, invoked with the guard's step-timeout signal beside the caller's own: a LangChain
 * tool node passes the agent's signal only, and nothing but the tool it runs can carry another.
 */
export function withSignal<T>(tool: T, signal: AbortSignal): T {
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

/**
 * One LangChain tool call through the guard, answered as a `ToolMessage`: the tool's own message
 * when it ran and the guard has nothing to add, else the guard's message, with status `error`
 * for every call that did not succeed (refused, stopped, failed, in doubt).
 */
export async function guardedToolMessage<A>(
  calls: GuardedCalls,
  toolCall: { readonly id?: string | undefined; readonly name: string; readonly args: unknown },
  runTool: (signal: AbortSignal) => Promise<A>,
): Promise<A | ToolMessage> {
  let answer: A | undefined;
  const r = await calls.execute(toolCall.id, toolCall.name, toolCall.args, async (signal) => {
    answer = await runTool(signal);
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
}
