import type { TraceRun } from '../../trace/trace-run.js';
import { type Detector, NO_STOP, startsNewUserTurn, type Verdict } from '../detector.js';

/**
 * A plain step/turn budget, the shared mechanics of the framework caps below.
 *
 * Mapping from a framework "turn"/"step"/"iteration" to a trace of tool calls: each of these
 * frameworks counts model invocations; a model invocation that asks for a tool is followed by the
 * tool running and by another invocation. The recorded agents issue one tool call per model turn, so
 * model turn k (1-based) produced call k-1, and a cap of N lets N calls run: the (N+1)-th model
 * invocation is refused, so the first call that does not run is index N.
 *
 * Caveats, documented rather than modelled:
 * - the turn that writes the final text answer also counts in these frameworks; the traces record it
 *   only when it is a tool call (ReAct `finish[...]`, ToolBench `Finish`), so a text-only final turn
 *   right after call N-1 would also hit the cap; that stop is invisible here (no call is lost), which
 *   flatters the caps slightly;
 * - the counter restarts with each new user message (a new Runner.run / generate call), see
 *   `startsNewUserTurn`; only tau-bench has user replies between calls.
 */
export function stepCap(name: string, rule: string, maxCalls: number): Detector {
  if (!Number.isInteger(maxCalls) || maxCalls < 1)
    throw new RangeError(`maxCalls must be >= 1, got ${maxCalls}`);
  return {
    name,
    judge(run: TraceRun): Verdict {
      let used = 0;
      for (let i = 0; i < run.calls.length; i++) {
        if (startsNewUserTurn(run, i)) used = 0;
        if (used === maxCalls) return { stopIndex: i, rule };
        used++;
      }
      return NO_STOP;
    },
  };
}

/**
 * OpenAI Agents SDK (Python) `max_turns`, default 10.
 *
 * Source: openai/openai-agents-python src/agents/run_config.py `DEFAULT_MAX_TURNS = 10`; the run loop
 * in src/agents/run.py does `current_turn += 1; if current_turn > max_turns: raise MaxTurnsExceeded`
 * before calling the model; docs https://openai.github.io/openai-agents-python/running_agents/
 * ("max_turns ... MaxTurnsExceeded"). A turn is one model invocation; with one tool call per turn,
 * 10 calls run and call index 10 is never requested.
 */
export function openaiAgentsMaxTurns(maxTurns = 10): Detector {
  return stepCap(`openai-agents max_turns=${maxTurns}`, 'max_turns', maxTurns);
}

/**
 * Vercel AI SDK agent loop `stopWhen: stepCountIs(20)`, the ToolLoopAgent default.
 *
 * Source: AI SDK docs "Loop Control" (https://ai-sdk.dev/docs/agents/loop-control, vercel/ai
 * content/docs/03-agents/04-loop-control.mdx): "By default, agents stop after 20 steps using
 * stepCountIs(20)"; `stepCountIs(n)` is true "when the number of completed steps equals" n, and the
 * condition is checked after a step whose tool calls have already executed. (Plain generateText /
 * streamText default to stepCountIs(1).) A step is one model generation plus its tool executions, so
 * 20 calls run and the model is not asked for call index 20.
 */
export function vercelAiStepCount(steps = 20): Detector {
  return stepCap(`vercel-ai stepCountIs(${steps})`, 'step_count', steps);
}

/**
 * CrewAI `Agent.max_iter`, default 25.
 *
 * Source: CrewAI docs "Customizing Agents" (https://docs.crewai.com/learn/customizing-agents):
 * "Max Iter ... Limits the maximum number of iterations (max_iter) for a task to prevent infinite
 * loops, with a default of 25". (The newer "Agents" concept page lists 20; 25 is the value this
 * evaluation was asked to model, and the factory takes any value.) The executor loop checks
 * `has_reached_max_iterations(iterations, max_iter)` = `iterations >= max_iter` before each LLM call
 * (crewai/utilities/agent_utils.py) and then forces a final answer, so with one tool call per
 * iteration 25 calls run and call index 25 is never made.
 */
export function crewaiMaxIter(maxIter = 25): Detector {
  return stepCap(`crewai max_iter=${maxIter}`, 'max_iter', maxIter);
}
