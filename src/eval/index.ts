/** Public face of the evaluation harness (see report.ts for the entry points). */

export * from './baselines/index.js';
export type { Detector } from './detector.js';
export { callIdentity, canonicalJson } from './identity.js';
export { countLabels, findPingPong, findStuckStreak, labelRun } from './labels.js';
export * from './loopguard-detector.js';
export type { JudgedRun } from './metrics.js';
export { computeMetrics, nearestRank, percent, wastedCalls } from './metrics.js';
export type { EvalFile } from './report.js';
export { evaluate, formatTable, judgeFile, poolFiles, TOTALS_NAME } from './report.js';
export { familySpread, formatSeedSpread, spread } from './seed-spread.js';
export { evaluateSeeds } from './seeded-report.js';
export { formatSummary } from './summary.js';
export { prefixKey, twinStops } from './twins.js';
