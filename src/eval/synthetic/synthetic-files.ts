import type { EvalFile } from '../report.js';
import { syntheticAssistantRuns } from './assistant-runs.js';
import { syntheticCodingFiles } from './coding-runs.js';

/**
 * The seeds `eval --synthetic` draws every family from unless given others: listed, so the output
 * is the same on every run. Several, because which stuck runs begin with honest work the one-line
 * rule happens to stop is itself a draw (the README's evaluation).
 */
export const DEFAULT_SYNTHETIC_SEEDS: readonly number[] = [11, 12, 13, 14, 15];

/**
 * Every synthetic family drawn from `seed`, as one source each: the coding agent through three
 * harnesses, and the tool-using assistant (its labels from the generator, see assistant-runs.ts),
 * each with its stuck runs' honest prefixes.
 */
export function syntheticFiles(seed: number): EvalFile[] {
  return [...syntheticCodingFiles(seed), syntheticAssistantRuns(seed)];
}
