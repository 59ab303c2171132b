import { isTerminal, type StopReport } from '../domain/index.js';
import type { Run } from '../runtime/index.js';

/**
 * When a framework's loop should end for the guard: once the guard has ended the run, the model
 * gets one more turn, with the stop message before it, to answer with what it has; asked again
 * after that, this says end. Call it once per turn of the loop.
 */
export function endAfterStop(run: Run): () => boolean {
  let modelHadItsTurn = false;
  return () => {
    if (!isTerminal(run.state.status)) return false;
    if (modelHadItsTurn) return true;
    modelHadItsTurn = true;
    return false;
  };
}

/** The stop as the agent's last word: what ended the run and why. */
export const stopNote = (report: StopReport | null): string =>
  report === null
    ? '[loopguard] the run has ended'
    : `[loopguard] ${report.terminalState} (${report.guardReason}): ${report.message}`;
