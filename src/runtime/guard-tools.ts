import type { CallResult } from './call-result.js';
import type { CallHooks, GuardedRun } from './guarded-run.js';

export type ToolImpl = (args: Record<string, unknown>, signal: AbortSignal) => Promise<unknown> | unknown;

export interface GuardToolsOptions {
  /** Tools with side effects; their calls need an operation key to be deduplicated. */
  readonly sideEffects?: readonly string[];
  /** The business operation a call performs, e.g. `${tenant}:charge:${args.order}`. */
  readonly operationKey?: (tool: string, args: Record<string, unknown>) => string | undefined;
  readonly reconcile?: CallHooks['reconcile'];
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
    out[name] = (args) => {
      const key = opts.operationKey?.(name, args);
      return run.call(
        {
          tool: name,
          args,
          ...(opts.sideEffects?.includes(name) ? { sideEffect: true } : {}),
          ...(key !== undefined ? { operationKey: key } : {}),
        },
        (signal) => impl(args, signal),
        opts.reconcile ? { reconcile: opts.reconcile } : {},
      );
    };
  }
  return out as { [K in keyof T]: (args: Record<string, unknown>) => Promise<CallResult> };
}
