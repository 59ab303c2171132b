import type { Detector } from '../detector.js';
import { stepCap } from './step-cap.js';

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
const CREWAI_DEFAULT_MAX_ITER = 25;

export function crewaiMaxIter(maxIter: number = CREWAI_DEFAULT_MAX_ITER): Detector {
  return stepCap(`crewai max_iter=${maxIter}`, 'max_iter', maxIter);
}
