/** Public face of the evaluation harness (see report.ts for the entry points). */

export {
  crewaiMaxIter,
  defaultBaselines,
  geminiCliToolLoop,
  identicalInARow,
  looksLikeErrorResult,
  openaiAgentsMaxTurns,
  openhandsStuck,
  rooCodeToolRepetition,
  vercelAiStepCount,
} from './baselines/index.js';
export type { Detector } from './detector.js';
export { callIdentity, canonicalJson } from './identity.js';
export { countLabels, findPingPong, findStuckStreak, labelRun } from './labels.js';
export * from './loopguard-detector.js';
export type { JudgedRun } from './metrics.js';
export { computeMetrics, nearestRank, percent, wastedCalls } from './metrics.js';
export { evaluate, formatTable, TOTALS_NAME } from './report.js';
export { formatSummary } from './summary.js';
export { prefixKey, twinStops } from './twins.js';
