import type { TraceCall, TraceRun } from '../trace/trace-run.js';

/**
 * What a detector decided about one recorded run. `stopIndex` is the index into `run.calls` of the
 * first call that did NOT run (refused, or never asked of the model); `null` means the run went to
 * its end untouched, also when the detector would only fire after the last recorded call.
 */
export interface Verdict {
  readonly stopIndex: number | null;
  readonly rule: string | null;
}

/** Anything that can replay a recorded run and say where it would have stopped it. */
export interface Detector {
  readonly name: string;
  judge(run: TraceRun): Verdict;
}

/** The verdict for "ran to the end". */
export const NO_STOP: Verdict = Object.freeze({ stopIndex: null, rule: null });

/** A stop at `stopIndex` by `rule`, or NO_STOP when the index is past the last recorded call. */
export function stopAt(run: TraceRun, stopIndex: number, rule: string): Verdict {
  return stopIndex < run.calls.length ? { stopIndex, rule } : NO_STOP;
}

/**
 * True when a user message (an instruction or a simulated user's reply) came between call
 * `index - 1` and call `index`: in every framework modelled here a new invocation began (a new
 * Runner.run / generate / prompt_id), so per-invocation counters restart. Call 0 is no boundary.
 */
export function startsNewUserTurn(run: TraceRun, index: number): boolean {
  return index > 0 && run.calls[index]?.after_user_turn === true;
}

/**
 * The stop of the rules that count identical calls in a row: the first call that is the `n`-th in
 * a row with the same `key`, by `rule`. A user turn starts a new row; a call whose key is null is
 * passed over and leaves the row as it was.
 */
export function nthInARow(
  run: TraceRun,
  n: number,
  rule: string,
  key: (call: TraceCall) => string | null,
): Verdict {
  let previous: string | null = null;
  let count = 0;
  for (const [i, call] of run.calls.entries()) {
    if (startsNewUserTurn(run, i)) previous = null;
    const k = key(call);
    if (k === null) continue;
    count = k === previous ? count + 1 : 1;
    previous = k;
    if (count >= n) return { stopIndex: i, rule };
  }
  return NO_STOP;
}
