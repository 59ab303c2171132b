import { MAX_DEPTH, put, type ResultKind } from '../domain/index.js';
import type { CallHooks, CallRequest } from './call-request.js';
import type { CallResult } from './call-result.js';
import type { Run } from './run.js';
import type { ToolOutcome } from './tool-outcome.js';

/** A tool for `guardTools`: its arguments as the model sent them, and the signal to stop on. */
export type ToolImpl<A = Record<string, unknown>, R = unknown> = (
  args: A,
  signal: AbortSignal,
) => Promise<R> | R;

export interface GuardToolsOptions<Name extends string = string> {
  /** Tools with side effects; a call with an operation key is one whatever this says. */
  readonly sideEffects?: readonly Name[];
  /** The business operation a call performs, e.g. `${tenant}:charge:${args.order}`; a key declares a side effect. */
  readonly operationKey?: (tool: Name, args: Record<string, unknown>) => string | undefined;
  readonly reconcile?: CallHooks['reconcile'];
}

/**
 * The signal a guarded tool gets: the guard's step timeout or the caller's own abort, whichever
 * fires first; a user's stop must reach the tool at once, not after the guard's timeout.
 */
export function combinedSignal(guard: AbortSignal, caller: AbortSignal | undefined): AbortSignal {
  return caller === undefined ? guard : AbortSignal.any([guard, caller]);
}

/** The guard's view of one tool call by name and arguments, as `run.call` takes it. */
export function toolCallRequest<Name extends string>(
  tool: Name,
  args: Record<string, unknown>,
  opts: GuardToolsOptions<Name> = {},
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

type Executed = Extract<CallResult, { status: 'executed' }>;

/**
 * A CallResult whose value has the tool's type where the tool gave it: a successful or cached
 * call's (unknown for a tool that returns an `outcome`); a failed call carries the guard's value.
 */
export type GuardedResult<V> =
  | (Executed & { readonly kind: 'SUCCESS'; readonly value: V })
  | (Executed & { readonly kind: Exclude<ResultKind, 'SUCCESS'> })
  | (Extract<CallResult, { status: 'cached' }> & { readonly value: V })
  | Exclude<CallResult, { status: 'executed' | 'cached' }>;

/** What a tool's value is to the guard: an `outcome` carries an untyped value. */
type ValueOf<R> = R extends ToolOutcome ? unknown : R;
type ArgsOf<F> = F extends (args: infer A, ...rest: never[]) => unknown
  ? unknown extends A
    ? Record<string, unknown>
    : A
  : never;

/** A tool behind the guard: the caller's signal, if given, is combined with the guard's step timeout. */
export type GuardedTool<F> = F extends (...args: never[]) => infer R
  ? (
      args: ArgsOf<F>,
      options?: { readonly signal?: AbortSignal },
    ) => Promise<GuardedResult<ValueOf<Awaited<R>>>>
  : never;

/**
 * Any tool function: declared as a method so that a tool with typed arguments (`{ q: string }`)
 * fits (method parameters are bivariant), while an untyped one gets `Record<string, unknown>`.
 */
type AnyTool = { tool(args: Record<string, unknown>, signal: AbortSignal): unknown }['tool'];

/**
 * A copy of the plain objects and arrays in `v` (what the guard records as JSON); anything else,
 * and anything nested deeper than the guard takes, is handed on as it is, for the guard to judge
 * as it would have (a class instance is refused, not turned into a plain object).
 */
function snapshotOf<A>(v: A, depth = 0): A {
  if (typeof v !== 'object' || v === null || depth > MAX_DEPTH) return v;
  if (Array.isArray(v)) return v.map((x) => snapshotOf(x, depth + 1)) as A;
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return v;
  const out: Record<string, unknown> = Object.create(proto);
  for (const [k, x] of Object.entries(v)) put(out, k, snapshotOf(x, depth + 1));
  return out as A;
}

/**
 * Wraps a map of tools (name -> function of its arguments and a signal): every call goes through
 * the run's guard and returns a typed result (`toModelMessage` makes it a message for the model).
 * Tool names in the options are checked against the map.
 */
export function guardTools<T extends { readonly [K in keyof T]: AnyTool }>(
  run: Run,
  tools: T,
  opts: GuardToolsOptions<Extract<keyof T, string>> = {},
): { readonly [K in keyof T]: GuardedTool<T[K]> } {
  const out: Record<string, GuardedTool<ToolImpl>> = {};
  for (const [name, impl] of Object.entries(tools) as [Extract<keyof T, string>, ToolImpl][]) {
    // put: a tool named "__proto__" is a tool like any other, not the map's prototype.
    put(out, name, ((given: Record<string, unknown>, options?: { readonly signal?: AbortSignal }) => {
      // The arguments as they are now: the call may wait for the run's turn, and a caller that
      // changes its object meanwhile (the next order) must not have this call record one order,
      // claim its key and run the tool with the other.
      const args = snapshotOf(given);
      const { request, hooks } = toolCallRequest(name, args, opts);
      return run.call(request, (signal) => impl(args, combinedSignal(signal, options?.signal)), hooks);
    }) as GuardedTool<ToolImpl>);
  }
  return out as unknown as { readonly [K in keyof T]: GuardedTool<T[K]> };
}
