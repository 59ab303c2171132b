import { type Detector, nthInARow } from '../detector.js';

/**
 * Gemini CLI `LoopDetectionService` tool-call check, `TOOL_CALL_LOOP_THRESHOLD = 5`.
 *
 * Source: google-gemini/gemini-cli packages/core/src/services/loopDetectionService.ts
 * (`checkToolCallLoop`, `getToolCallKey`). Behaviour reproduced exactly:
 * - key = sha256(`${name}:${JSON.stringify(args)}`), arguments in the order the model wrote them
 *   (no key sorting; comparing the strings is equivalent to comparing their hashes);
 * - the count is 1 on a new key and +1 on each consecutive repeat; `count >= 5` is a loop. The check
 *   runs on the ToolCallRequest stream event, before the tool is scheduled, and the turn is halted,
 *   so the FIFTH consecutive identical call does not run: stopIndex = onset + 4. Results are not
 *   looked at;
 * - the service is `reset()` for each new user prompt (new prompt_id), so a user turn restarts the
 *   count. (Its content-chanting and LLM-based checks need model text, which the traces lack.)
 */
export function geminiCliToolLoop(threshold = 5): Detector {
  return {
    name: `gemini-cli tool loop=${threshold}`,
    judge: (run) =>
      nthInARow(run, threshold, 'tool_call_loop', (call) => `${call.tool}:${JSON.stringify(call.args)}`),
  };
}
