/** Public face of the evaluation harness (see report.ts for the entry points). */

export {
  CREWAI_DEFAULT_MAX_ITER,
  crewaiMaxIter,
  defaultBaselines,
  GEMINI_CLI_TOOL_CALL_LOOP_THRESHOLD,
  geminiCliToolLoop,
  IDENTICAL_IN_A_ROW,
  identicalInARow,
  looksLikeErrorResult,
  OPENAI_AGENTS_DEFAULT_MAX_TURNS,
  openaiAgentsMaxTurns,
  openhandsStuck,
  ROO_CODE_DEFAULT_LIMIT,
  rooCodeToolRepetition,
  stepCap,
  VERCEL_AI_DEFAULT_STEP_COUNT,
  vercelAiStepCount,
} from './baselines/index.js';
export type { Detector, Verdict } from './detector.js';
export { NO_STOP, startsNewUserTurn, stopAt } from './detector.js';
export { callIdentity, callResultKey, canonicalJson } from './identity.js';
export type { LabelCounts, RunLabels, Streak } from './labels.js';
export { countLabels, findPingPong, findStuckStreak, labelRun, STUCK_MIN_STREAK } from './labels.js';
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
