import type { Detector } from '../detector.js';
import { stepCap } from './step-cap.js';

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
const VERCEL_AI_DEFAULT_STEP_COUNT = 20;

export function vercelAiStepCount(steps: number = VERCEL_AI_DEFAULT_STEP_COUNT): Detector {
  return stepCap(`vercel-ai stepCountIs(${steps})`, 'step_count', steps);
}
