import type { StopReport } from '../../src/domain/index.js';

/** A complete stop report for tests, with whatever a test cares about overridden. */
export function stopReport(overrides: Partial<StopReport> = {}): StopReport {
  return {
    terminalState: 'STOPPED_LOOP_GUARD',
    guardReason: 'exact_repeat',
    message: 'stopped',
    completed: [],
    completedOperations: [],
    inDoubtOperations: [],
    gaps: [],
    lastSafeCheckpoint: null,
    unmetPrecondition: null,
    resumeCondition: 'new input',
    nextAllowedAction: 'answer',
    evidence: { fingerprints: [], counts: {}, thresholds: {} },
    spend: { steps: 0, toolCalls: 0, tokens: 0, costUsd: 0, elapsedMs: 0 },
    children: [],
    ...overrides,
  };
}
