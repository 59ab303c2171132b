import { type Detector, nthInARow } from '../detector.js';
import { callIdentity } from '../identity.js';

/**
 * The one-line rule users ship themselves: "refuse the Nth identical call in a row". Identity is
 * the eval's (tool, arguments with keys sorted at every depth); results are not looked at, so it
 * cannot tell a loop from paging or polling. The Nth consecutive identical call does not run
 * (stopIndex = onset + N - 1); a user turn between calls breaks the row, as it does for every
 * framework rule modelled here. N = 3 is the simplest rule the guard must beat; N = 5 is the
 * patient variant (Gemini CLI's threshold, without its argument-order sensitivity).
 */
export function identicalInARow(n: number): Detector {
  if (!Number.isInteger(n) || n < 2) throw new RangeError(`n must be an integer >= 2, got ${n}`);
  return {
    name: `${n} identical in a row`,
    judge: (run) => nthInARow(run, n, 'identical_in_a_row', callIdentity),
  };
}
