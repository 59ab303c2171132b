import type { Detector } from '../detector.js';
import { crewaiMaxIter } from './crewai-max-iter.js';
import { geminiCliToolLoop } from './gemini-cli-tool-loop.js';
import { IDENTICAL_IN_A_ROW, identicalInARow } from './identical-in-a-row.js';
import { openaiAgentsMaxTurns } from './openai-agents-max-turns.js';
import { openhandsStuck } from './openhands-stuck.js';
import { rooCodeToolRepetition } from './roo-code-tool-repetition.js';
import { vercelAiStepCount } from './vercel-ai-step-count.js';

export { CREWAI_DEFAULT_MAX_ITER, crewaiMaxIter } from './crewai-max-iter.js';
export { looksLikeErrorResult } from './error-result.js';
export { GEMINI_CLI_TOOL_CALL_LOOP_THRESHOLD, geminiCliToolLoop } from './gemini-cli-tool-loop.js';
export { IDENTICAL_IN_A_ROW, identicalInARow } from './identical-in-a-row.js';
export { OPENAI_AGENTS_DEFAULT_MAX_TURNS, openaiAgentsMaxTurns } from './openai-agents-max-turns.js';
export { openhandsStuck } from './openhands-stuck.js';
export { ROO_CODE_DEFAULT_LIMIT, rooCodeToolRepetition } from './roo-code-tool-repetition.js';
export { stepCap } from './step-cap.js';
export { VERCEL_AI_DEFAULT_STEP_COUNT, vercelAiStepCount } from './vercel-ai-step-count.js';

/**
 * Every baseline with its tool's default settings, in a fixed order: the one-line rules first
 * (what loopguard must beat), then the step caps, then the frameworks' own loop checks.
 */
export function defaultBaselines(): Detector[] {
  return [
    ...IDENTICAL_IN_A_ROW.map((n) => identicalInARow(n)),
    openaiAgentsMaxTurns(),
    vercelAiStepCount(),
    crewaiMaxIter(),
    rooCodeToolRepetition(),
    geminiCliToolLoop(),
    openhandsStuck(),
  ];
}
