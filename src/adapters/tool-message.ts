import { ToolMessage } from '@langchain/core/messages';
import { IllegalStateError } from '../domain/index.js';
import { combinedSignal, succeeded, ToolError } from '../runtime/index.js';
import type { GuardedCalls } from './guarded-calls.js';
import { toolReply } from './tool-reply.js';

/** The text of a tool message as the guard judges results: identical outputs hash alike. */
const textOf = (m: ToolMessage): string =>
  typeof m.content === 'string' ? m.content : JSON.stringify(m.content);

type Invocable = { invoke: (input: unknown, config?: { signal?: AbortSignal }) => unknown };

/** The mark LangChain's retry middleware reads (`getRetryable` of `@langchain/core/errors`). */
const RETRYABLE = Symbol.for('langchain.errors.retryable');

/**
 * The tool for one guarded call of a middleware: invoked with the guard's step-timeout signal
 * beside the caller's own (a LangChain tool node passes the agent's signal only, and nothing but
 * the tool it runs can carry another), and invoked once. A middleware listed after the guard that
 * calls the tool again (`toolRetryMiddleware`) would run it again under the one decision the
 * guard took: a charge made twice, unseen. So a second invoke is refused, marked not retryable,
 * and `answer` gives the guard the first invoke's failure, whatever the middleware made of it:
 * a side effect that failed unclassified is in doubt, as without that middleware. Refused for
 * every tool: the policy, which the adapter does not see, may make any tool a side effect, and a
 * retry outside the guard is a call it counts and decides.
 */
export function invokedOnce<T>(
  tool: T,
  signal: AbortSignal,
): { readonly tool: T; answer<A>(a: Promise<A>): Promise<A> } {
  const invocable = tool as unknown as Invocable | null | undefined;
  let invoked = false;
  let failure: { readonly error: unknown } | undefined;
  const invoke = async (t: Invocable, input: unknown, config?: { signal?: AbortSignal }) => {
    if (invoked) {
      const refused = new IllegalStateError(
        'reentrant_call',
        'the tool was invoked again inside the one call the guard decided (a retry middleware listed after loopguardMiddleware); list loopguardMiddleware after it',
      );
      throw Object.defineProperty(refused, RETRYABLE, { value: false });
    }
    invoked = true;
    try {
      return await t.invoke(input, { ...config, signal: combinedSignal(signal, config?.signal) });
    } catch (error) {
      failure = { error };
      throw error;
    }
  };
  const proxied =
    typeof invocable?.invoke !== 'function'
      ? tool
      : (new Proxy(invocable, {
          get: (t, p, receiver) =>
            p === 'invoke'
              ? (input: unknown, config?: { signal?: AbortSignal }) => invoke(t, input, config)
              : Reflect.get(t, p, receiver),
        }) as T);
  return {
    tool: proxied,
    async answer<A>(a: Promise<A>): Promise<A> {
      const [settled] = await Promise.allSettled([a]);
      if (failure !== undefined) throw failure.error;
      if (settled.status === 'rejected') throw settled.reason;
      return settled.value;
    },
  };
}

/**
 * LangGraph's control flow thrown through a tool (`interrupt()`, a drain, a command for the
 * parent graph): the graph must get it, not the model as an error. Checked by the flag the
 * package sets, as its own `isGraphBubbleUp` does, so loopguard/langchain needs no LangGraph import.
 */
const isGraphBubbleUp = (e: unknown): boolean =>
  typeof e === 'object' && e !== null && (e as { is_bubble_up?: unknown }).is_bubble_up === true;

/** `interrupt()` (as LangGraph's `isGraphInterrupt`): the graph pauses, and runs the tool again when resumed. */
const isGraphInterrupt = (e: unknown): boolean =>
  e instanceof Error && (e.name === 'GraphInterrupt' || e.name === 'NodeInterrupt');

/**
 * One LangChain tool call through the guard, answered as a `ToolMessage`: the tool's own message
 * when it ran and the guard has nothing to add, else the guard's message, with status `error`
 * for every call that did not succeed (refused, stopped, failed, in doubt). LangGraph's control
 * flow goes on to the graph once the guard has recorded the call: an interrupt as not run (the
 * tool stopped to ask a person, and is decided anew when the graph resumes and runs it again),
 * any other as the failure it is to the guard (in doubt for a side effect).
 */
export async function guardedToolMessage<A>(
  calls: GuardedCalls,
  toolCall: { readonly id?: string | undefined; readonly name: string; readonly args: unknown },
  runTool: (signal: AbortSignal) => Promise<A>,
): Promise<A | ToolMessage> {
  let answer: A | undefined;
  let graphFlow: { readonly error: unknown } | undefined;
  const r = await calls.execute(toolCall.id, toolCall.name, toolCall.args, async (signal) => {
    try {
      answer = await runTool(signal);
    } catch (error) {
      if (isGraphBubbleUp(error)) graphFlow = { error };
      // RETRYABLE at once, as a call recorded not run elsewhere: PRECONDITION would refuse the
      // same call, which is what the graph runs again when the person has answered.
      if (isGraphInterrupt(error))
        throw new ToolError(
          'RETRYABLE',
          'interrupted',
          'the graph paused in the tool to ask a person (interrupt())',
          0,
        );
      throw error;
    }
    if (!ToolMessage.isInstance(answer)) return answer;
    // An error the tool node caught is a failed call to the guard, not a result to remember.
    if (answer.status === 'error') throw new Error(textOf(answer));
    return textOf(answer);
  });
  if (graphFlow !== undefined) throw graphFlow.error;
  const reply = toolReply(r);
  if (r.status === 'executed' && succeeded(r) && reply === r.value && answer !== undefined) return answer;
  return new ToolMessage({
    content: typeof reply === 'string' ? reply : JSON.stringify(reply),
    tool_call_id: toolCall.id ?? '',
    name: toolCall.name,
    status: succeeded(r) ? 'success' : 'error',
  });
}
