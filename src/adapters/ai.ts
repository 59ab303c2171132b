/**
 * loopguard/ai: the guard in the Vercel AI SDK's tool loop (`generateText`, `streamText`,
 * `ToolLoopAgent`). `wrapTools` guards each tool's `execute` (AI SDK 5 to 7); on AI SDK 7,
 * `guardToolApproval` also takes the guard's decision in the call-level `toolApproval`, so a
 * refused call never reaches `execute` and the model gets the refusal as the denial's reason.
 * Only types come from `ai`: this file loads without it.
 */
import type { StopCondition, ToolApprovalStatus, ToolExecutionOptions, ToolSet } from 'ai';
import { put } from '../domain/index.js';
import { type GuardedRun, type GuardToolsOptions, toModelMessage } from '../runtime/index.js';
import { endAfterStop } from './end-after-stop.js';
import { GuardedCalls } from './guarded-calls.js';
import { toolReply } from './tool-reply.js';

/** The call-level approval function of AI SDK 7 (`generateText({ toolApproval })`). */
export type GuardApproval = (options: {
  readonly toolCall: { readonly toolCallId: string; readonly toolName: string; readonly input: unknown };
}) => Promise<ToolApprovalStatus>;

/**
 * A streaming `execute` yields preliminary outputs and the SDK keeps the last: the guard judges
 * that one, and the tool's work happens inside the guarded call, not after it.
 */
async function finalOutput(out: unknown): Promise<unknown> {
  if (typeof out !== 'object' || out === null || !(Symbol.asyncIterator in out)) return out;
  let last: unknown;
  for await (const o of out as AsyncIterable<unknown>) last = o;
  return last;
}

function wrapWith<T extends ToolSet>(calls: GuardedCalls, tools: T): T {
  const out: Record<string, unknown> = {};
  for (const [name, t] of Object.entries(tools)) {
    const execute = t.execute;
    // put: a tool named "__proto__" stays a tool, not the map's prototype.
    put(
      out,
      name,
      execute === undefined
        ? t
        : {
            ...t,
            execute: async (input: unknown, options: ToolExecutionOptions<unknown>) =>
              toolReply(
                await calls.execute(options.toolCallId, name, input, (signal) =>
                  finalOutput(execute(input as never, { ...options, abortSignal: signal } as never)),
                ),
              ),
          },
    );
  }
  return out as T;
}

/**
 * The tools with every `execute` behind the run's guard (AI SDK 5, 6 and 7): a refused or stopped
 * call returns the guard's message as the tool's output instead of running, a completed side
 * effect asked for again returns its first result. The guard's step timeout replaces the
 * framework's abort signal for the tool.
 */
export function wrapTools<T extends ToolSet>(run: GuardedRun, tools: T, opts: GuardToolsOptions = {}): T {
  return wrapWith(new GuardedCalls(run, opts), tools);
}

/**
 * AI SDK 7: the guard as `toolApproval`, with the tools it guards. A refused or stopped call is
 * denied with the guard's message as the reason (the model reads it), a bounded wait becomes a
 * user approval (the reason says why), an allowed call runs in its `execute`. When one step asks
 * for several tools, the guard decides one at a time: the first in the approval, the others when
 * they execute, where a refusal comes back as their output.
 */
export function guardToolApproval<T extends ToolSet>(
  run: GuardedRun,
  tools: T,
  opts: GuardToolsOptions = {},
): { readonly tools: T; readonly toolApproval: GuardApproval } {
  const calls = new GuardedCalls(run, opts);
  return {
    tools: wrapWith(calls, tools),
    toolApproval: async ({ toolCall }) => {
      // The SDK asks for every approval of a step before it executes any: a second decision
      // now would wait for the first call's execute, which waits for this answer.
      if (calls.holding) return 'not-applicable';
      const r = await calls.decide(toolCall.toolCallId, toolCall.toolName, toolCall.input);
      if (r === null || r.status === 'cached') return 'approved';
      if (r.status === 'waiting') return { type: 'user-approval', reason: toModelMessage(r) };
      return { type: 'denied', reason: toModelMessage(r) };
    },
  };
}

/**
 * A stop condition for `stopWhen`: once the guard has ended the run, the model gets one more step,
 * with the stop message in its prompt, to answer; whatever it asks for then is refused, and the
 * loop ends. Use it beside a step cap: `stopWhen: [guardStopped(run), stepCountIs(20)]`.
 */
export function guardStopped(run: GuardedRun): StopCondition<ToolSet> {
  const end = endAfterStop(run);
  return () => end();
}
