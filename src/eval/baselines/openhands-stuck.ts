import { type Detector, NO_STOP, startsNewUserTurn, stopAt } from '../detector.js';
import { callIdentity } from '../identity.js';
import { sameAt } from '../labels.js';
import { looksLikeErrorResult } from './error-result.js';

/**
 * OpenHands `StuckDetector` (V0 controller), the checks that apply to tool-call traces.
 *
 * Source: OpenHands/OpenHands openhands/controller/stuck.py (`is_stuck`,
 * `_is_stuck_repeating_action_observation`, `_is_stuck_repeating_action_error`,
 * `_is_stuck_action_observation_pattern`); the agent controller calls `is_stuck()` at the start of
 * each step, i.e. after the previous observation arrived and before the model is asked for the next
 * action, and stops the run with AgentStuckInLoopError. So when a pattern completes with call k, the
 * first call that does not run is k + 1.
 *
 * Mapping: action = (tool, args with keys sorted at every depth); observation = result_sha256
 * (OpenHands compares events with ==, ignoring only command pids); "error observation" = a result
 * for which `looksLikeErrorResult` holds (see error-result.ts). Checks, in OpenHands' order:
 * 1. `repeating_action_observation`: the last 4 actions identical and the last 4 observations
 *    identical -> 4 identical (call, result) pairs at k-3..k, stop at k+1 = onset + 4;
 * 2. `repeating_action_error`: the last 3 actions identical and the last 3 observations all errors
 *    (the error texts may differ) -> stop at onset + 3;
 * 3. monologue (repeated agent messages with no observation between): not applicable, the traces
 *    hold no agent messages;
 * 4. `repeating_action_observation_pattern`: over the last 6 steps, actions 0=2=4 and 1=3=5 and the
 *    same for observations (OpenHands does not require A != B) -> stop at onset + 6;
 * 5. context-window error loop (10 condensation events) and 6. empty-response loop: not applicable.
 * A user message between calls puts an agent MessageAction into the history, which breaks every
 * window above, so windows never span a user turn. (The SyntaxError branch of check 2 needs
 * IPython observations, which the traces do not have.)
 */
export function openhandsStuck(): Detector {
  return {
    name: 'openhands stuck',
    judge(run) {
      const ids = run.calls.map((call) => callIdentity(call));
      const errors = run.calls.map((call) => looksLikeErrorResult(call.result));
      const sameAction = (a: number, b: number) => ids[a] === ids[b];
      const same = (a: number, b: number) => sameAt(ids, run, a, b);
      let segmentStart = 0;
      for (let k = 0; k < run.calls.length; k++) {
        if (startsNewUserTurn(run, k)) segmentStart = k;
        const inSegment = k - segmentStart + 1;
        if (inSegment >= 4 && same(k - 3, k - 2) && same(k - 3, k - 1) && same(k - 3, k))
          return stopAt(run, k + 1, 'repeating_action_observation');
        if (
          inSegment >= 3 &&
          sameAction(k - 2, k - 1) &&
          sameAction(k - 2, k) &&
          errors[k - 2] === true &&
          errors[k - 1] === true &&
          errors[k] === true
        )
          return stopAt(run, k + 1, 'repeating_action_error');
        if (inSegment >= 6 && same(k, k - 2) && same(k, k - 4) && same(k - 1, k - 3) && same(k - 1, k - 5))
          return stopAt(run, k + 1, 'repeating_action_observation_pattern');
      }
      return NO_STOP;
    },
  };
}
