import type { AnswerCount, RunState } from './run-state.js';

/**
 * What a result tells the guard beyond "this exact call answered this before", read off the run
 * itself rather than off any harness's wording.
 *
 * - A question answered differently from last time is news: the world moved in between. An agent
 *   that edits and re-runs its test sees the test flip between a few outcomes it has seen before
 *   (fails, passes, fails another way): seeing an old output again after an edit is not a loop. A
 *   run that only ever toggles between known states is bounded: after `REVISIT_LIMIT` such flips
 *   with nothing never seen before in between, a flip no longer counts as progress.
 * - An answer that unrelated calls (not near-duplicates of an earlier ask) return alike is an
 *   acknowledgement ("written", an empty output in the harness's wrapper): it proves nothing
 *   about any of them, so rephrasings that get it cannot show they got nowhere. Rephrasings of one
 *   question answering alike is the evidence the near-duplicate rule needs, so they do not count.
 */

/** Unrelated calls that must return one answer before it counts as an acknowledgement. */
export const ACK_CALLERS = 2;
/** Answers remembered per run: enough for the acknowledgements of a long coding run. */
export const ANSWERS_CAP = 32;
/** Flips back to a known result that count as progress before something new arrives. */
export const REVISIT_LIMIT = 4;

export function callersOf(answers: readonly AnswerCount[], resultHash: string): number {
  for (const a of answers) if (a.resultHash === resultHash) return a.callers;
  return 0;
}

/** `answers` with one more caller for `resultHash`, most recently counted last, capped. */
export function counted(answers: readonly AnswerCount[], resultHash: string): readonly AnswerCount[] {
  const callers = callersOf(answers, resultHash) + 1;
  const rest = answers.filter((a) => a.resultHash !== resultHash);
  if (rest.length >= ANSWERS_CAP) rest.splice(0, rest.length - ANSWERS_CAP + 1);
  rest.push({ resultHash, callers });
  return rest;
}

export interface Answered {
  readonly resultHash: string;
  /** The result says something about its call (see informative.ts). */
  readonly says: boolean;
  /** This exact (call, result) pair was seen before in the run. */
  readonly known: boolean;
  /** The call resembled an earlier ask of its tool (a near-duplicate). */
  readonly rephrased: boolean;
  /** What this same question answered last time, if it was asked since the last outside news. */
  readonly previousHash: string | undefined;
}

export interface News {
  /** The answer says something about the call and no unrelated call answered alike. */
  readonly informative: boolean;
  /** The same question answered differently from last time. */
  readonly flipped: boolean;
  /** A flip back to a result this call gave before, still counted as progress. */
  readonly revisit: boolean;
  readonly answers: readonly AnswerCount[];
}

export function newsOf(s: RunState, a: Answered): News {
  const answers = a.known || a.rephrased ? s.answers : counted(s.answers, a.resultHash);
  const informative = a.says && callersOf(answers, a.resultHash) < ACK_CALLERS;
  const flipped = a.previousHash !== undefined && a.previousHash !== a.resultHash;
  const revisit = flipped && a.known && s.revisits < REVISIT_LIMIT;
  return { informative, flipped, revisit, answers };
}
