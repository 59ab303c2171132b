/**
 * loopguard/ai: the guard in the Vercel AI SDK's tool loop. `wrapTools` guards each tool's
 * `execute` (AI SDK 5 to 7); on AI SDK 7, `guardToolApproval` decides in `toolApproval`, so a
 * refused call never reaches `execute`. Only types that AI SDK 5, 6 and 7 all have come from
 * `ai`: this file loads without it, and its declarations type-check against each of them.
 */
import type { StopCondition, ToolExecutionOptions, ToolSet } from 'ai';
import { isTerminal } from '../domain/index.js';
import {
  type CallResult,
  combinedSignal,
  type GuardToolsOptions,
  type Run,
  succeeded,
  toModelMessage,
} from '../runtime/index.js';
import { endAfterStop } from './end-after-stop.js';
import { GuardedCalls } from './guarded-calls.js';
import { toolReply } from './tool-reply.js';

/**
 * What `guardToolApproval`'s function answers: the statuses of AI SDK 7's `ToolApprovalStatus`
 * it uses, spelled out here because AI SDK 5 and 6 have no such type.
 */
export type GuardApprovalStatus =
  | 'approved'
  | 'not-applicable'
  | { readonly type: 'user-approval'; readonly reason?: string }
  | { readonly type: 'denied'; readonly reason: string };

/** The call-level approval function of AI SDK 7 (`generateText({ toolApproval })`). */
export type GuardApproval = (options: {
  readonly toolCall: { readonly toolCallId: string; readonly toolName: string; readonly input: unknown };
  /** The tools of the `generateText` call, which may hold more than the guarded ones. */
  readonly tools?: unknown;
  readonly messages?: readonly unknown[];
  readonly toolsContext?: unknown;
}) => Promise<GuardApprovalStatus>;

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

/**
 * The guard's answer for a call it did not run, from a tool with `toModelOutput`: that conversion
 * would read it as the declared output ("receipt undefined"), so the wrapper shows an error text.
 */
interface Refusal {
  readonly loopguard: string;
}
const refusals = new WeakSet<object>();
const refusalOf = (v: unknown): Refusal | null =>
  typeof v === 'object' && v !== null && refusals.has(v) ? (v as Refusal) : null;

/** A tool's output for a guarded call: its own value where it has one, so `toModelOutput` reads its declared type. */
function typedReply(r: CallResult): unknown {
  if (succeeded(r)) return r.value;
  const refusal: Refusal = { loopguard: toModelMessage(r) };
  refusals.add(refusal);
  return refusal;
}

type ToModelOutput = (arg: unknown) => unknown;

/** A tool's `toModelOutput` that shows a refusal as an error text and hands everything else on. */
const refusalAware =
  (toModelOutput: ToModelOutput): ToModelOutput =>
  (arg) => {
    // AI SDK 5 passes the output itself, 6 and 7 pass { toolCallId, input, output }.
    const refusal = refusalOf(arg) ?? refusalOf((arg as { output?: unknown } | null)?.output ?? null);
    return refusal === null ? toModelOutput(arg) : { type: 'error-text', value: refusal.loopguard };
  };

function wrapOne(calls: GuardedCalls, name: string, t: ToolSet[string]): unknown {
  const execute = t.execute;
  if (execute === undefined) return t;
  const toModelOutput = (t as { toModelOutput?: ToModelOutput }).toModelOutput;
  const reply = toModelOutput === undefined ? toolReply : typedReply;
  return {
    ...t,
    execute: async (input: unknown, options: ToolExecutionOptions<unknown>) =>
      reply(
        await calls.execute(options.toolCallId, name, input, (signal) =>
          finalOutput(
            execute(
              input as never,
              { ...options, abortSignal: combinedSignal(signal, options.abortSignal) } as never,
            ),
          ),
        ),
      ),
    ...(toModelOutput === undefined ? {} : { toModelOutput: refusalAware(toModelOutput) }),
  };
}

/** Own properties (fromEntries): a tool named "__proto__" stays a tool, not the map's prototype. */
const wrapWith = <T extends ToolSet>(calls: GuardedCalls, tools: T): T =>
  Object.fromEntries(Object.entries(tools).map(([name, t]) => [name, wrapOne(calls, name, t)])) as T;

/**
 * The tools with every `execute` behind the run's guard: a call the guard does not run returns
 * its message as the output (an error text to `toModelOutput`), a completed side effect asked for
 * again its first result. The abort signal fires on the caller's abort or the guard's step
 * timeout, whichever is first. A tool's own `needsApproval` stays as it is.
 */
export function wrapTools<T extends ToolSet>(run: Run, tools: T, opts: GuardToolsOptions = {}): T {
  return wrapWith(new GuardedCalls(run, opts), tools);
}

type NeedsApproval = boolean | ((input: unknown, options: object) => boolean | PromiseLike<boolean>);
type ToolCallOf = Parameters<GuardApproval>[0]['toolCall'];
interface ApprovalTool {
  readonly execute?: unknown;
  readonly needsApproval?: NeedsApproval;
  readonly contextSchema?: unknown;
}

/** An own property of a map the SDK hands over: a tool named "__proto__" is a tool, not the prototype. */
const own = (map: unknown, name: string): unknown =>
  typeof map === 'object' && map !== null && Object.hasOwn(map, name)
    ? (map as Record<string, unknown>)[name]
    : undefined;

/**
 * The tool's context as its `needsApproval` gets it from the SDK: checked and filled in (defaults)
 * by its `contextSchema`, with the SDK's own schema reader (loaded here: only AI SDK 7, already
 * loaded, calls a `toolApproval`).
 */
async function toolContext(tool: ApprovalTool, raw: unknown): Promise<unknown> {
  if (tool.contextSchema == null) return raw;
  const { asSchema } = await import('ai');
  const checked = await asSchema(tool.contextSchema as Parameters<typeof asSchema>[0]).validate?.(raw);
  if (checked === undefined) return raw;
  if (!checked.success) throw checked.error;
  return checked.value;
}

/**
 * Whether the tool asks its own human approval for this call (its `needsApproval`). A context
 * its schema refuses, or a `needsApproval` that throws, asks the human: the guard never answers
 * for a person it could not ask about.
 */
async function asksHuman(
  tool: ApprovalTool | undefined,
  toolCall: ToolCallOf,
  messages: readonly unknown[] | undefined,
  toolsContext: unknown,
): Promise<boolean> {
  const needs = tool?.needsApproval;
  if (tool === undefined || typeof needs !== 'function') return needs === true;
  try {
    const context = await toolContext(tool, own(toolsContext, toolCall.toolName));
    return Boolean(
      await needs(toolCall.input, { toolCallId: toolCall.toolCallId, messages: messages ?? [], context }),
    );
  } catch {
    return true;
  }
}

/**
 * AI SDK 7: the guard as `toolApproval`, with the tools it guards. A refused or stopped call is
 * denied with the guard's message as the reason, a bounded wait becomes a user approval, an
 * allowed call runs in its `execute`. Of several tools in one step, the first is decided in the
 * approval, the others when they execute (a refusal is then their output).
 *
 * The guard only adds refusals: a call-level `toolApproval` replaces a tool's own
 * `needsApproval`, so this one asks the human on its behalf and the guard judges the call when it
 * runs; once the run has ended, such a call is denied without asking anyone. A tool of
 * `generateText` this guard does not run (not in `tools`) is answered by its own `needsApproval`.
 */
export function guardToolApproval<T extends ToolSet>(
  run: Run,
  tools: T,
  opts: GuardToolsOptions = {},
): { readonly tools: T; readonly toolApproval: GuardApproval } {
  const calls = new GuardedCalls(run, opts);
  const guarded = wrapWith(calls, tools);
  // The executes this guard runs calls in: only a call that will run in one of them is decided here.
  const executes = new Set(Object.values(guarded).map((t) => (t as ApprovalTool).execute));
  executes.delete(undefined);
  return {
    tools: guarded,
    toolApproval: async ({ toolCall, tools: given, messages, toolsContext }) => {
      // The tool the SDK will run: `generateText`'s own tools may hold more than the guarded ones.
      const tool = (own(given, toolCall.toolName) ?? own(guarded, toolCall.toolName)) as
        | ApprovalTool
        | undefined;
      // Not run by this guard (another tool set, MCP tools, a tool without execute): holding a
      // decision for an execute that never comes would hold the run's turn, and this approval
      // replaces the tool's own, so it is answered as the tool would answer it.
      if (tool === undefined || !executes.has(tool.execute))
        return (await asksHuman(tool, toolCall, messages, toolsContext))
          ? { type: 'user-approval' }
          : 'not-applicable';
      if (await asksHuman(tool, toolCall, messages, toolsContext)) {
        // Deciding now would hold the run's turn until the human answers: judged at execute instead.
        if (!isTerminal(run.state.status)) return { type: 'user-approval' };
        const r = await calls.execute(toolCall.toolCallId, toolCall.toolName, toolCall.input, () => {
          throw new Error('a call of an ended run does not run');
        });
        return { type: 'denied', reason: toModelMessage(r) };
      }
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
 * A stop condition: once the guard has ended the run, the model gets one more step to answer,
 * then the loop ends. Use it beside a step cap: `stopWhen: [guardStopped(run), stepCountIs(20)]`;
 * generic over the tools, so it fits any tool set's `stopWhen` in AI SDK 5, 6 and 7.
 */
export function guardStopped<TOOLS extends ToolSet = ToolSet>(run: Run): StopCondition<TOOLS> {
  return endAfterStop(run);
}
