/**
 * loopguard/openai-agents: the guard in the OpenAI Agents SDK's runner: a tool input guardrail
 * decides before the tool runs, `execute` runs the tool inside that decision (or under the guard
 * alone), and `toolUseBehavior` ends the agent once the guard has ended the run. A tool's own
 * `needsApproval` still goes to the human; the guardrail judges the call after the approval.
 */
import {
  type RunContext,
  ToolGuardrailFunctionOutputFactory,
  type ToolInputGuardrailDefinition,
  type ToolToFinalOutputFunction,
} from '@openai/agents';
import { IllegalStateError, jsonValue, type StopReport } from '../domain/index.js';
import { combinedSignal, type GuardToolsOptions, type Run, toModelMessage } from '../runtime/index.js';
import { endAfterStop, stopNote } from './end-after-stop.js';
import { GuardedCalls } from './guarded-calls.js';
import { toolReply } from './tool-reply.js';

/** What the runner passes a tool's `execute` besides its input (the SDK does not export the type). */
type CallDetails = { readonly toolCall?: { readonly callId: string }; readonly signal?: AbortSignal };
type Execute<I, R> = (input: I, context?: RunContext, details?: CallDetails) => R | Promise<R>;

export interface AgentsGuardOptions<TOutput> extends GuardToolsOptions {
  /**
   * The final output when the guard ends the run: for an agent with an `outputType`, a value of
   * that type. Without it the output is the stop report as text (no `outputType` only).
   */
  readonly stopOutput?: (report: StopReport) => TOutput;
}

export interface AgentsGuard {
  /**
   * For `tool({ inputGuardrails: [..., guard.inputGuardrail] })`: the guard decides before the
   * tool runs. Put it last: an allowed call holds the run's turn until its execute comes, and a
   * guardrail after it that rejects the call would leave it to the step timeout (as would the
   * runner's `toolExecution.preApprovalInputGuardrails` with a human approval that takes longer).
   */
  readonly inputGuardrail: ToolInputGuardrailDefinition;
  /**
   * Wraps the `execute` of `tool({ name, execute })`. A call the guard does not run gets its
   * message as output; a completed side effect asked for again gets its first result.
   * `details.signal` fires on the run's abort or the guard's step timeout, whichever is first.
   */
  execute<I, R>(name: string, fn: Execute<I, R>): Execute<I, unknown>;
  /**
   * For `new Agent({ toolUseBehavior })`: once the guard has ended the run, the model gets one
   * more turn; a tool it calls then ends the run with `stopOutput`'s value (or the stop report as
   * text). With an `outputType` and no `stopOutput`, it throws `run_stopped` instead.
   */
  readonly toolUseBehavior: ToolToFinalOutputFunction;
}

/** Whether the agent whose tools ran declares a structured `outputType` (text is the default). */
const structuredOutput = (results: Parameters<ToolToFinalOutputFunction>[1]): boolean => {
  const outputType = (results[0]?.runItem as { agent?: { outputType?: unknown } } | undefined)?.agent
    ?.outputType;
  return outputType !== undefined && outputType !== 'text';
};

export function agentsGuard<TOutput = string>(run: Run, opts: AgentsGuardOptions<TOutput> = {}): AgentsGuard {
  const calls = new GuardedCalls(run, opts);
  const end = endAfterStop(run);
  return {
    inputGuardrail: {
      type: 'tool_input',
      name: 'loopguard',
      run: async ({ toolCall }) => {
        // Model-visible tool arguments arrive as a JSON string; the guard fingerprints the object.
        const args = jsonValue(toolCall.arguments, toolCall.arguments);
        const r = await calls.decide(toolCall.callId, toolCall.name, args);
        return r === null || r.status === 'cached'
          ? ToolGuardrailFunctionOutputFactory.allow()
          : ToolGuardrailFunctionOutputFactory.rejectContent(toModelMessage(r), { rule: r.rule });
      },
    },
    execute:
      <I, R>(name: string, fn: Execute<I, R>) =>
      async (input: I, context?: RunContext, details?: CallDetails) =>
        toolReply(
          await calls.execute(details?.toolCall?.callId, name, input, (signal) =>
            fn(input, context, { ...details, signal: combinedSignal(signal, details?.signal) }),
          ),
        ),
    toolUseBehavior: (_context, results) => {
      const report = run.state.report;
      if (!end() || report === null) return { isFinalOutput: false, isInterrupted: undefined };
      const text = stopNote(report);
      if (opts.stopOutput === undefined && structuredOutput(results))
        throw new IllegalStateError(
          'run_stopped',
          `${text} The agent declares an outputType: pass agentsGuard(run, { stopOutput }) to end it with a value of that type.`,
          { details: { report } },
        );
      const value = opts.stopOutput === undefined ? text : opts.stopOutput(report);
      return {
        isFinalOutput: true,
        isInterrupted: undefined,
        // The runner parses a final output from a tool by the agent's outputType.
        finalOutput: typeof value === 'string' ? value : JSON.stringify(value),
      };
    },
  };
}
