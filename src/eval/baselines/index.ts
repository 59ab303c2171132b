import type { Detector } from '../detector.js';
import { geminiCliToolLoop } from './gemini-cli-tool-loop.js';
import { identicalInARow } from './identical-in-a-row.js';
import { openhandsStuck } from './openhands-stuck.js';
import { rooCodeToolRepetition } from './roo-code-tool-repetition.js';
import { crewaiMaxIter, openaiAgentsMaxTurns, vercelAiStepCount } from './step-cap.js';

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
    identicalInARow(3),
    identicalInARow(5),
    openaiAgentsMaxTurns(),
    vercelAiStepCount(),
    crewaiMaxIter(),
    rooCodeToolRepetition(),
    geminiCliToolLoop(),
    openhandsStuck(),
  ];
}
