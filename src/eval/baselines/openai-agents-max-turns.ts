import type { Detector } from '../detector.js';
import { stepCap } from './step-cap.js';

/**
 * OpenAI Agents SDK (Python) `max_turns`, default 10.
 *
 * Source: openai/openai-agents-python src/agents/run_config.py `DEFAULT_MAX_TURNS = 10`; the run loop
 * in src/agents/run.py does `current_turn += 1; if current_turn > max_turns: raise MaxTurnsExceeded`
 * before calling the model; docs https://openai.github.io/openai-agents-python/running_agents/
 * ("max_turns ... MaxTurnsExceeded"). A turn is one model invocation; with one tool call per turn,
 * 10 calls run and call index 10 is never requested.
 */
const OPENAI_AGENTS_DEFAULT_MAX_TURNS = 10;

export function openaiAgentsMaxTurns(maxTurns: number = OPENAI_AGENTS_DEFAULT_MAX_TURNS): Detector {
  return stepCap(`openai-agents max_turns=${maxTurns}`, 'max_turns', maxTurns);
}
