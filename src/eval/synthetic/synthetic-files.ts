import type { EvalFile } from '../report.js';
import { ASSISTANT_FAMILY, ASSISTANT_SEED, syntheticAssistantRuns } from './assistant-runs.js';
import { SYNTHETIC_SEED, syntheticCodingFiles } from './coding-runs.js';

/** The seeds of the synthetic families, for the report's header. */
export const SYNTHETIC_SEEDS = { coding: SYNTHETIC_SEED, assistant: ASSISTANT_SEED } as const;

/**
 * Every synthetic family as one source each: the coding agent through three harnesses, and the
 * tool-using assistant (its labels from the generator, see assistant-runs.ts), each with its
 * stuck runs' honest prefixes.
 */
export function syntheticFiles(): EvalFile[] {
  const assistant = syntheticAssistantRuns();
  return [
    ...syntheticCodingFiles(),
    {
      name: ASSISTANT_FAMILY,
      runs: assistant.runs,
      labels: assistant.labels,
      honestPrefixes: assistant.honestPrefixes,
    },
  ];
}
