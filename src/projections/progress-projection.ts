import type { RunState } from '../domain/index.js';
import type { RunsProjection } from './runs-projection.js';

export interface ProgressView {
  readonly runId: string;
  readonly progressVersion: number;
  /** Fingerprints of the calls in the current window (since new information last arrived). */
  readonly window: readonly string[];
  readonly noProgress: number;
}

const view = (s: RunState): ProgressView => ({
  runId: s.runId,
  progressVersion: s.progressVersion,
  window: s.window.map((w) => w.fingerprint),
  noProgress: s.noProgress,
});

/** run id -> progress version and the current window: a view of the runs projection's states. */
export class ProgressProjection {
  constructor(private readonly runs: RunsProjection) {}

  snapshot(): Record<string, ProgressView> {
    return Object.fromEntries(Object.entries(this.runs.snapshot()).map(([id, s]) => [id, view(s)]));
  }
}
