/**
 * loopguard/mastra: the guard in a Mastra agent's tool loop (`createTool` or AI SDK tools).
 * Nothing is imported from `@mastra/core`, not even types: this file loads without it, and its
 * declarations type-check against whatever version the user has.
 */

import { IllegalStateError, put } from '../domain/index.js';
import type { GuardToolsOptions, Run } from '../runtime/index.js';
import {
  type CallResult,
  combinedSignal,
  succeeded,
  ToolError,
  toModelMessage,
  toolCallRequest,
} from '../runtime/index.js';
import { endAfterStop } from './end-after-stop.js';
import { argsOf } from './guarded-calls.js';
import { toolReply } from './tool-reply.js';

/**
 * Thrown from a guarded tool's `execute` for a call that did not do its work (refused, stopped,
 * waiting, failed, in doubt): the model reads Mastra's tool error, so a declared `outputSchema`
 * never sees the refusal. `result` is the guard's answer; for a tool that failed, `cause` is its
 * error, and the message starts with that error's.
 */
export class GuardedCallError extends IllegalStateError {
  constructor(
    readonly result: CallResult,
    failure?: unknown,
  ) {
    // A failed call's value is the guard's (null): the model reads the tool's own error instead.
    const shown =
      result.status === 'executed' && failure !== undefined
        ? { ...result, value: failure instanceof Error ? failure.message : String(failure) }
        : result;
    super('call_not_done', toModelMessage(shown), {
      details: { status: result.status },
      ...(failure === undefined ? {} : { cause: failure }),
    });
  }
}

/** Mastra's suspend of a running tool: the agent's run waits for a person's answer (`resumeData`). */
type Suspend = (...args: unknown[]) => unknown;
/** What Mastra passes a tool's `execute` besides its input: `createTool`'s context or an AI SDK tool's options. */
interface ExecuteContext {
  readonly abortSignal?: AbortSignal;
  readonly suspend?: Suspend;
  readonly resumeData?: unknown;
  readonly agent?: { readonly suspend?: Suspend; readonly resumeData?: unknown };
}
type Execute = (input: unknown, context?: ExecuteContext) => unknown;
interface ToolLike {
  readonly execute?: Execute;
  readonly outputSchema?: unknown;
  readonly toModelOutput?: unknown;
}

/**
 * Mastra's own validation of a tool's input or output comes back as a value, not a throw: to the
 * guard that is a failed call (retrying it with the same arguments will fail alike), not a result.
 */
const validationFailure = (v: unknown): string | null => {
  if (typeof v !== 'object' || v === null || !('validationErrors' in v)) return null;
  const { error, message } = v as { error?: unknown; message?: unknown };
  return error === true && typeof message === 'string' ? message : null;
};

/**
 * The tool's context with each `suspend` Mastra gave it (a `createTool` tool's `agent.suspend`, an
 * AI SDK tool's own) noting that the tool suspended itself.
 */
function watchingSuspend(context: ExecuteContext | undefined): {
  readonly context: ExecuteContext;
  readonly suspended: () => boolean;
} {
  let suspended = false;
  const wrap = (suspend: Suspend | undefined) =>
    suspend === undefined
      ? {}
      : {
          suspend: (...args: unknown[]) => {
            suspended = true;
            return suspend(...args);
          },
        };
  const { agent } = context ?? {};
  return {
    context: {
      ...context,
      ...wrap(context?.suspend),
      ...(agent === undefined ? {} : { agent: { ...agent, ...wrap(agent.suspend) } }),
    },
    suspended: () => suspended,
  };
}

function wrapOne(run: Run, opts: GuardToolsOptions, name: string, tool: ToolLike): ToolLike {
  const execute = tool.execute;
  if (typeof execute !== 'function') return tool;
  // A tool that declares its output gets its own value or an error, never the guard's text.
  const typed = tool.outputSchema !== undefined || tool.toModelOutput !== undefined;
  const guarded: Execute = async (input, context) => {
    let failure: unknown;
    // What a tool that suspended itself returned, for Mastra to finish its suspension with.
    let suspension: { readonly out: unknown } | undefined;
    const { request, hooks } = toolCallRequest(name, argsOf(input), opts);
    // Mastra runs a suspended tool's `execute` again with the person's answer: news from outside,
    // like a user turn, so the call its suspension left refused is judged anew.
    const resumed = (context?.agent?.resumeData ?? context?.resumeData) != null;
    const r = await run.call(
      resumed ? { ...request, afterUserTurn: true } : request,
      async (signal) => {
        try {
          const watched = watchingSuspend(context);
          const out = await execute.call(tool, input, {
            ...watched.context,
            abortSignal: combinedSignal(signal, context?.abortSignal),
          });
          if (watched.suspended()) {
            suspension = { out };
            // Waiting for a person, not done: a SUCCESS would complete the operation's key, and
            // the resume would be answered "already done" without running. Its key is released.
            throw new ToolError(
              'PRECONDITION',
              'suspended',
              `${name} suspended itself for a person's answer`,
            );
          }
          const invalid = validationFailure(out);
          if (invalid !== null) throw new Error(invalid);
          return out;
        } catch (e) {
          failure = e;
          throw e;
        }
      },
      hooks,
    );
    if (suspension !== undefined) return suspension.out;
    // Only a call that did its work is answered with a value; everything else is a tool error.
    if (!succeeded(r)) throw new GuardedCallError(r, failure);
    return typed ? r.value : toolReply(r);
  };
  // A copy with the tool's own prototype and fields (its id, schemas, `requireApproval`, Mastra's
  // markers): Mastra asks for the approval before it calls `execute`, so the guard never answers it.
  const copy = Object.assign(Object.create(Object.getPrototypeOf(tool) as object) as object, tool);
  return Object.assign(copy, { execute: guarded });
}

/**
 * The tools with every `execute` behind the run's guard, for `new Agent({ tools })`. A call that
 * succeeds gets its own value (without `outputSchema`, with the guard's note where it has one), a
 * completed side effect asked for again its first result; any other call throws
 * `GuardedCallError`. `abortSignal` fires on the caller's abort or the guard's step timeout,
 * whichever is first. A tool's `requireApproval` stays: the guard judges the call once approved.
 * A tool that suspends itself is recorded as not run, and its resumed `execute` is judged anew.
 */
export function wrapTools<T extends Record<string, object>>(
  run: Run,
  tools: T,
  opts: GuardToolsOptions = {},
): T {
  const out: Record<string, unknown> = {};
  // put: a tool named "__proto__" stays a tool, not the map's prototype.
  for (const [name, tool] of Object.entries(tools))
    put(out, name, wrapOne(run, opts, name, tool as ToolLike));
  return out as T;
}

/**
 * A stop condition for `agent.generate(prompt, { stopWhen })`: once the guard has ended the run,
 * the model gets one more step to answer, then the loop ends. Mastra caps the steps at 5 with
 * neither `stopWhen` nor `maxSteps`, at `maxSteps` beside a `stopWhen`: pass both,
 * `{ maxSteps: 20, stopWhen: guardStopped(run) }`.
 */
export function guardStopped(run: Run): (options: { readonly steps: readonly unknown[] }) => boolean {
  return endAfterStop(run);
}
