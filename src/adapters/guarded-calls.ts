import { InvalidInputError } from '../domain/index.js';
import {
  type CallResult,
  type GuardToolsOptions,
  type Run,
  ToolError,
  type ToolFn,
  ToolNotStarted,
  toolCallRequest,
} from '../runtime/index.js';

/** Frameworks hand tools whatever the model sent; the guard fingerprints an object of arguments. */
export const argsOf = (input: unknown): Record<string, unknown> =>
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

/** A call `decide` allowed, waiting for its execute; `run` hands it the tool and gives its result. */
interface Held {
  readonly tool: string;
  readonly key: string | undefined;
  readonly run: (fn: ToolFn) => Promise<CallResult>;
}

/** Rejects with the signal's reason once it fires: what a wait for something that may never come races. */
const aborted = (signal: AbortSignal): Promise<never> =>
  new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });

/**
 * A run's tool calls for a framework that asks first and executes later (`toolApproval`, a tool
 * input guardrail): `decide` takes the guard's decision in the framework's hook, `execute` runs
 * the tool inside that same guarded call. Between the two the run holds its turn, so no later
 * call is decided without this call's result, and the decision is durable before the hook says
 * yes. Without such a hook, `execute` alone decides and runs.
 */
export class GuardedCalls {
  /**
   * Calls allowed by `decide` that wait for their execute, by the framework's call id, with the
   * operation key the decision was taken on. The first execute under the id takes the decision:
   * a model may reuse a call id within a step, and each call must run under its own decision.
   */
  private readonly held = new Map<string, Held>();
  /** Every allowed call until it settles, waiting for its execute or running: the run's turn is theirs. */
  private readonly unsettled = new Set<Promise<CallResult>>();
  /** Calls `decide` answered without running them (a cached side effect), for their execute to return. */
  private readonly answered = new Map<
    string,
    { readonly tool: string; readonly key: string | undefined; readonly result: CallResult }
  >();

  constructor(
    private readonly run: Run,
    private readonly opts: GuardToolsOptions = {},
  ) {}

  /** True while an allowed call has not settled: deciding another now would wait for it. */
  get holding(): boolean {
    return this.unsettled.size > 0;
  }

  /** Settles once every call held now has settled (executed, or given up at the step timeout). */
  async free(): Promise<void> {
    await Promise.allSettled([...this.unsettled]);
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
        // An execute that never comes (a step the framework cut off) ends at the step timeout
        // with nothing left running: a promise pending forever would hold the key in this process
        // as a side effect still under way, and no reconcile would ever be asked about it.
        const fn = await Promise.race([toolFn, aborted(signal)]).catch(() => {
          // No execute came before the step timeout (a sibling's guardrail tripped, the step was
          // cut off): the tool never started, so the call is recorded not run, never in doubt.
          throw new ToolNotStarted('its execute never came');
        });
        // The guard gave up waiting (step timeout) and recorded so: the tool must not run late.
        if (signal.aborted) throw new ToolNotStarted('its execute came after the step timeout');
        return fn(signal);
      },
      hooks,
    );
    const first = await Promise.race([result, admitted]);
    if (first === null) {
      const held: Held = {
        tool,
        key: request.operationKey,
        run: (fn) => {
          give(fn);
          return result;
        },
      };
      this.held.set(callId, held);
      this.unsettled.add(result);
      // Settled, with or without its execute (a framework that never executes an allowed call
      // leaves it to the step timeout): the run's turn is free again. The id may hold another
      // call's decision by now (a reused id), which stays.
      const release = () => {
        this.unsettled.delete(result);
        if (this.held.get(callId) === held) this.held.delete(callId);
      };
      result.then(release, release);
      return null;
    }
    if (first.status === 'cached')
      this.answered.set(callId, { tool, key: request.operationKey, result: first });
    return first;
  }

  /**
   * Runs a call: inside the decision `decide` took for it, else decided and run now. A decision
   * holds only for the operation it was taken on: a framework may run the tool with other input
   * than its hook saw (a permission flow's `updatedInput`), and a key decided free must not cover
   * another key's run, nor one decided done answer it. Then the held call is recorded as not run
   * and the call actually made is decided anew. The key is compared, not the input: frameworks
   * validate the input between hook and execute (defaults filled), which changes no key.
   */
  async execute(callId: string | undefined, tool: string, input: unknown, fn: ToolFn): Promise<CallResult> {
    const held = callId === undefined ? undefined : this.held.get(callId);
    if (callId !== undefined && held !== undefined) {
      if (held.tool !== tool) throw reusedId(callId, tool);
      // Taken by this execute: another under the same id is another call, decided anew below.
      this.held.delete(callId);
    }
    let made: ReturnType<typeof toolCallRequest>;
    try {
      made = toolCallRequest(tool, argsOf(input), this.opts);
    } catch (err) {
      // An operationKey that throws on the input run: the held call must not wait for its timeout.
      if (held !== undefined)
        await held.run(() => {
          throw err;
        });
      throw err;
    }
    const { request, hooks } = made;
    if (held !== undefined) {
      if (held.key === request.operationKey) return held.run(fn);
      await held.run(() => {
        throw new ToolError('PRECONDITION', 'not_run', 'the tool ran with other input (another operation)');
      });
    }
    const answered = callId === undefined ? undefined : this.answered.get(callId);
    if (callId !== undefined && answered !== undefined) {
      if (answered.tool !== tool) throw reusedId(callId, tool);
      this.answered.delete(callId);
      if (answered.key === request.operationKey) return answered.result;
    }
    return this.run.call(request, fn, hooks);
  }
}
