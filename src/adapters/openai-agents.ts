/**
 * loopguard/openai-agents: the guard in the OpenAI Agents SDK's runner. A tool input guardrail
 * takes the guard's decision before the tool runs (a refusal reaches the model through
 * `rejectContent`), a wrapper for `tool({ execute })` runs the tool inside that decision (or
 * under the guard alone, without the guardrail), and a `toolUseBehavior` ends the agent's turns
 * once the guard has ended the run.
 */
import {
  type RunContext,
  ToolGuardrailFunctionOutputFactory,
  type ToolInputGuardrailDefinition,
  type ToolToFinalOutputFunction,
} from '@openai/agents';
import { type GuardedRun, type GuardToolsOptions, toModelMessage } from '../runtime/index.js';
import { endAfterStop } from './end-after-stop.js';
import { GuardedCalls } from './guarded-calls.js';
import { toolReply } from './tool-reply.js';

/** What the runner passes a tool's `execute` besides its input (the SDK does not export the type). */
type CallDetails = { readonly toolCall?: { readonly callId: string }; readonly signal?: AbortSignal };
type Execute<I, R> = (input: I, context?: RunContext, details?: CallDetails) => R | Promise<R>;

export interface AgentsGuard {
  /**
   * For `tool({ inputGuardrails: [..., guard.inputGuardrail] })`: the guard decides before the
   * tool runs. Put it last: an allowed call holds the run's turn until its execute comes, and a
   * guardrail after it that rejects the call would leave it to the step timeout (as would the
   * runner's `toolExecution.preApprovalInputGuardrails` with a human approval that takes longer).
   */
  readonly inputGuardrail: ToolInputGuardrailDefinition;
  /**
   * Wraps the `execute` of `tool({ name, execute })`; `name` is the tool's name. A call the guard
   * does not run gets the guard's message as its output; a completed side effect asked for again
   * gets its first result.
   */
  execute<I, R>(name: string, fn: Execute<I, R>): Execute<I, unknown>;
  /**
   * For `new Agent({ toolUseBehavior })`: once the guard has ended the run, the model gets one
   * more turn to answer; if it calls a tool instead, the run ends with the stop report as output.
   */
  readonly toolUseBehavior: ToolToFinalOutputFunction;
}

/** Model-visible tool arguments arrive as a JSON string; the guard fingerprints the object. */
const parseArguments = (raw: string): unknown => {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
};

export function agentsGuard(run: GuardedRun, opts: GuardToolsOptions = {}): AgentsGuard {
  const calls = new GuardedCalls(run, opts);
  const end = endAfterStop(run);
  return {
    inputGuardrail: {
      type: 'tool_input',
      name: 'loopguard',
      run: async ({ toolCall }) => {
        const r = await calls.decide(toolCall.callId, toolCall.name, parseArguments(toolCall.arguments));
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
            fn(input, context, { ...details, signal }),
          ),
        ),
    toolUseBehavior: () => {
      const report = run.state.report;
      if (!end() || report === null) return { isFinalOutput: false, isInterrupted: undefined };
      return {
        isFinalOutput: true,
        isInterrupted: undefined,
        finalOutput: `[loopguard] ${report.terminalState} (${report.guardReason}): ${report.message}`,
      };
    },
  };
}
