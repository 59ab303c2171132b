import { InvalidInputError } from '../domain/index.js';
import {
  type CallResult,
  type GuardToolsOptions,
  type Run,
  type ToolFn,
  toolCallRequest,
} from '../runtime/index.js';

/** Frameworks hand tools whatever the model sent; the guard fingerprints an object of arguments. */
const argsOf = (input: unknown): Record<string, unknown> =>
  typeof input === 'object' && input !== null && !Array.isArray(input)
    ? (input as Record<string, unknown>)
    : { input };

/**
 * A call id a model or provider reused for a call of another tool: that call must not run (or be
 * answered) under the decision the first one got. The input is not compared: frameworks validate
 * it between their hook and the execute (defaults filled, unknown keys dropped), so the two differ
 * for one and the same call.
 */
const reusedId = (callId: string, tool: string) =>
  new InvalidInputError(
    'invalid_call',
    'toolCallId',
    `call id ${callId} (${tool}) is already the id of a call of another tool, which the guard decided; a call is never run or answered under another's decision`,
  );

/**
 * A run's tool calls for a framework that asks first and executes later (`toolApproval`, a tool
 * input guardrail): `decide` takes the guard's decision in the framework's hook, `execute` runs
 * the tool inside that same guarded call. Between the two the run holds its turn, so no later
 * call is decided without this call's result, and the decision is durable before the hook says
 * yes. Without such a hook, `execute` alone decides and runs.
 */
export class GuardedCalls {
  /** Calls allowed by `decide` that wait for their execute, by the framework's call id . */
  private readonly held = new Map<
    string,
    { readonly tool: string; readonly run: (fn: ToolFn) => Promise<CallResult> }
  >();
  /** Calls `decide` answered without running them (a cached side effect), for their execute to return. */
  private readonly answered = new Map<string, { readonly tool: string; readonly result: CallResult }>();

  constructor(
    private readonly run: Run,
    private readonly opts: GuardToolsOptions = {},
  ) {}

  /** True while an allowed call waits for its execute: deciding another now would wait for it. */
  get holding(): boolean {
    return this.held.size > 0;
  }

  /**
   * The guard's decision on a call the framework is about to execute: null when it may run (its
   * `execute` must follow, with the same call id), else the result the call gets instead.
   */
  async decide(callId: string, tool: string, input: unknown): Promise<CallResult | null> {
    const known = this.held.get(callId) ?? this.answered.get(callId);
    if (known !== undefined && known.tool !== tool) throw reusedId(callId, tool);
    // Asked again before its execute (a framework that runs its hook twice): already allowed.
    if (this.held.has(callId)) return null;
    const { request, hooks } = toolCallRequest(tool, argsOf(input), this.opts);
    let admit: () => void = () => undefined;
    const admitted = new Promise<null>((resolve) => {
      admit = () => resolve(null);
    });
    let give: (fn: ToolFn) => void = () => undefined;
    const toolFn = new Promise<ToolFn>((resolve) => {
      give = resolve;
    });
    const result = this.run.call(
      request,
      async (signal) => {
        admit();
        const fn = await toolFn;
        // The guard gave up waiting (step timeout) and recorded so: the tool must not run late.
        if (signal.aborted) throw signal.reason;
        return fn(signal);
      },
      hooks,
    );
    const first = await Promise.race([result, admitted]);
    if (first === null) {
      this.held.set(callId, {
        tool,
        run: (fn) => {
          give(fn);
          return result;
        },
      });
      // Settled, with or without its execute (a framework that never executes an allowed call
      // leaves it to the step timeout): the run's turn is free again.
      const release = () => this.held.delete(callId);
      result.then(release, release);
      return null;
    }
    if (first.status === 'cached') this.answered.set(callId, { tool, result: first });
    return first;
  }

  /** Runs a call: inside the decision `decide` took for it, else decided and run now. */
  execute(callId: string | undefined, tool: string, input: unknown, fn: ToolFn): Promise<CallResult> {
    if (callId !== undefined) {
      const held = this.held.get(callId);
      if (held !== undefined)
        return held.tool === tool ? held.run(fn) : Promise.reject(reusedId(callId, tool));
      const answered = this.answered.get(callId);
      if (answered !== undefined) {
        if (answered.tool !== tool) return Promise.reject(reusedId(callId, tool));
        this.answered.delete(callId);
        return Promise.resolve(answered.result);
      }
    }
    const { request, hooks } = toolCallRequest(tool, argsOf(input), this.opts);
    return this.run.call(request, fn, hooks);
  }
}
