import type { Detector } from '../detector.js';
import { crewaiMaxIter } from './crewai-max-iter.js';
import { geminiCliToolLoop } from './gemini-cli-tool-loop.js';
import { IDENTICAL_IN_A_ROW, identicalInARow } from './identical-in-a-row.js';
import { openaiAgentsMaxTurns } from './openai-agents-max-turns.js';
import { openhandsStuck } from './openhands-stuck.js';
import { rooCodeToolRepetition } from './roo-code-tool-repetition.js';
import { vercelAiStepCount } from './vercel-ai-step-count.js';

export { looksLikeErrorResult } from './error-result.js';
export {
  crewaiMaxIter,
  geminiCliToolLoop,
  identicalInARow,
  openaiAgentsMaxTurns,
  openhandsStuck,
  rooCodeToolRepetition,
  vercelAiStepCount,
};

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
