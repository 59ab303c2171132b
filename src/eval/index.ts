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
export type { DetectorMetrics, JudgedRun } from './metrics.js';
export { computeMetrics, judgeRun, nearestRank, percent, wastedCalls } from './metrics.js';
export type { EvalFile, EvalReport, FileReport, JudgedFile } from './report.js';
export { evaluate, formatTable, judgeFile, poolFiles, TOTALS_NAME } from './report.js';
export type { FamilySpread, Spread, TargetsHeld } from './seed-spread.js';
export { familySpread, formatSeedSpread, spread, TARGET_SAVED_VS_THREE } from './seed-spread.js';
export type { SeededReport } from './seeded-report.js';
export { evaluateSeeds } from './seeded-report.js';
export { formatSummary } from './summary.js';
export { prefixKey, twinStops } from './twins.js';
