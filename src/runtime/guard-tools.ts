import { put } from '../domain/index.js';
import type { CallHooks, CallRequest } from './call-request.js';
import type { CallResult } from './call-result.js';
import type { GuardedRun } from './guarded-run.js';

export type ToolImpl = (args: Record<string, unknown>, signal: AbortSignal) => Promise<unknown> | unknown;

export interface GuardToolsOptions {
  /** Tools with side effects; their calls need an operation key to be deduplicated. */
  readonly sideEffects?: readonly string[];
  /** The business operation a call performs, e.g. `${tenant}:charge:${args.order}`. */
  readonly operationKey?: (tool: string, args: Record<string, unknown>) => string | undefined;
  readonly reconcile?: CallHooks['reconcile'];
}

/** The guard's view of one tool call by name and arguments, as `run.call` takes it. */
export function toolCallRequest(
  tool: string,
  args: Record<string, unknown>,
  opts: GuardToolsOptions = {},
): { readonly request: CallRequest; readonly hooks: CallHooks } {
  const key = opts.operationKey?.(tool, args);
  return {
    request: {
      tool,
      args,
      ...(opts.sideEffects?.includes(tool) ? { sideEffect: true } : {}),
      ...(key !== undefined ? { operationKey: key } : {}),
    },
    hooks: opts.reconcile ? { reconcile: opts.reconcile } : {},
  };
}

/**
 * Wraps a map of tools (name -> async function) for an agent framework: every call goes through
 * the run's guard, and the framework gets a CallResult it can turn into a message for the model.
 */
export function guardTools<T extends Record<string, ToolImpl>>(
  run: GuardedRun,
  tools: T,
  opts: GuardToolsOptions = {},
): { [K in keyof T]: (args: Record<string, unknown>) => Promise<CallResult> } {
  const out: Record<string, (args: Record<string, unknown>) => Promise<CallResult>> = {};
  for (const [name, impl] of Object.entries(tools)) {
    // put: a tool named "__proto__" is a tool like any other, not the map's prototype.
    put(out, name, (args) => {
      const { request, hooks } = toolCallRequest(name, args, opts);
      return run.call(request, (signal) => impl(args, signal), hooks);
    });
  }
  return out as { [K in keyof T]: (args: Record<string, unknown>) => Promise<CallResult> };
}
