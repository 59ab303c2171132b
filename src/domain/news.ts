import type { ResultKind } from './events.js';
import { own } from './input-check.js';
import type { AnswerCount, AskedEntry, InFlightCall, RunState } from './run-state.js';

/**
 * What a result tells the guard beyond "this exact call answered this before", read off the run
 * itself rather than off any harness's wording.
 *
 * - A call never made before that answers with nothing about the world (an edit, a write: an
 *   empty output, an acknowledgement) may have changed it. Checking afterwards what it changed is
 *   news even when a check answers what it answered before the change: the test still failing the
 *   same way, `git status` unchanged, are what the agent needed to learn. So is a question answered
 *   differently from last time (the test flipped back to an old outcome): the world moved. Such
 *   re-checks are bounded: after `REVISIT_LIMIT` of them with nothing never seen before in
 *   between, they no longer count, so an agent that only toggles between known states is stopped.
 * - An answer that unrelated calls (not near-duplicates of an earlier ask) return alike proves
 *   nothing about any of them, so rephrasings that get it cannot show they got nowhere.
 *   Rephrasings of one question answering alike is the evidence the near-duplicate rule needs, so
 *   they do not count. Such an answer is an acknowledgement (the world may have changed) only when
 *   it says nothing about its ask; a substantive one (a file's contents read another way) is a
 *   read that told nothing new, so it starts no checks or failure counts over.
 */

/** Unrelated calls that must return one answer before it proves nothing about any of them. */
const ACK_CALLERS = 2;
/** Answers remembered per run: enough for the acknowledgements of a long coding run. */
const ANSWERS_CAP = 32;
/** Re-checks that count as progress before something never seen before arrives. */
export const REVISIT_LIMIT = 4;
/** (call, result) pairs remembered since the last change of the world. */
const SINCE_CHANGE_CAP = 32;

const callersOf = (answers: readonly AnswerCount[], resultHash: string): number =>
  answers.find((a) => a.resultHash === resultHash)?.callers ?? 0;

/** `answers` with one more caller for `resultHash`, most recently counted last, capped. */
function counted(answers: readonly AnswerCount[], resultHash: string): readonly AnswerCount[] {
  // One pass: the callers so far (the first entry's, as callersOf reads them) and the others.
  let callers: number | undefined;
  const rest: AnswerCount[] = [];
  for (const a of answers) {
    if (a.resultHash !== resultHash) rest.push(a);
    else callers ??= a.callers;
  }
  callers = (callers ?? 0) + 1;
  if (rest.length >= ANSWERS_CAP) rest.splice(0, rest.length - ANSWERS_CAP + 1);
  rest.push({ resultHash, callers });
  return rest;
}

export interface Answered {
  /** The (call, result) pair as run-state.ts `seenPair` numbers it. */
  readonly pair: number;
  /**
   * The raw result hash: what unrelated calls are compared by, since between different calls a
   * number that differs may be the answer itself.
   */
  readonly resultHash: string;
  /** The result class (volatile parts masked, see normalised-result.ts): what the same question is compared by. */
  readonly resultClass: string;
  /** The result says something (see informative.ts `isInformative`). */
  readonly says: boolean;
  /** The result is about the call's arguments (see informative.ts `answersAsk`). */
  readonly answersAsk: boolean;
  /** This exact (call, result) pair was seen before in the run. */
  readonly known: boolean;
  /** The result reports a failure: a failed call changed nothing in the world. */
  readonly failed: boolean;
  /** The call resembled an earlier ask of its tool (a near-duplicate). */
  readonly rephrased: boolean;
  /** The class of what this same question answered last time, if asked since the last outside news. */
  readonly previousClass: string | undefined;
}

export interface News {
  /** The answer says something about the call, and no unrelated call answered alike. */
  readonly informative: boolean;
  /** The same question answered differently from last time. */
  readonly flipped: boolean;
  /** A flip back to an answer this call gave before, still counted as news (opens a new window). */
  readonly flipBack: boolean;
  /**
   * A check, after a change, of something already checked before it, still counted as progress
   * for no_progress. It opens no new window: the repeat rules still see A, B, A, B go round.
   */
  readonly recheck: boolean;
  readonly answers: readonly AnswerCount[];
  readonly sinceChange: readonly number[];
  /** The call may have changed the world: a new call acknowledged with nothing, and not failed. */
  readonly changed: boolean;
}

export function newsOf(s: RunState, a: Answered): News {
  const answers = a.known || a.rephrased ? s.answers : counted(s.answers, a.resultHash);
  const substantive = a.says && a.answersAsk;
  const informative = substantive && callersOf(answers, a.resultHash) < ACK_CALLERS;
  const flipped = a.previousClass !== undefined && a.previousClass !== a.resultClass;
  const checkedSince = s.sinceChange.includes(a.pair);
  const budget = a.known && a.says && s.revisits < REVISIT_LIMIT;
  const flipBack = budget && flipped;
  const recheck = budget && !flipped && !checkedSince;
  // A new call acknowledged with nothing about the world (nothing at all, or nothing about its
  // ask) may have changed it: checks start over. A read that happens to share no word with its ask
  // counts too; the re-checks it allows are bounded. A substantive answer another call got too is
  // not an acknowledgement but a repeated read: nothing new, and no change.
  const change = !a.known && !substantive && !a.failed;
  const sinceChange = change
    ? [a.pair]
    : checkedSince
      ? s.sinceChange
      : [...s.sinceChange.slice(s.sinceChange.length >= SINCE_CHANGE_CAP ? 1 : 0), a.pair];
  return { informative, flipped, flipBack, recheck, answers, sinceChange, changed: change };
}

/**
 * Near-duplicate asks in a row that got the very answer of the ask they resemble, per tool. Any
 * new information in the run (news from outside, a new informative answer, a question answered
 * differently than before, a near-duplicate answered differently from the ask it resembles)
 * starts every count over: similar asks with different answers are exploration, not rephrasing.
 */
export function nearDuplicatesAfter(
  s: RunState,
  call: InFlightCall,
  kind: ResultKind,
  /** The raw result hash: a rephrasing is compared with what the ask it resembles got, as it came. */
  result: string,
  prior: readonly AskedEntry[],
  news: News,
  outsideNews: boolean,
  known: boolean,
): RunState['nearDuplicates'] {
  if (kind === 'RETRYABLE') return outsideNews ? {} : s.nearDuplicates;
  const fresh = outsideNews || (!known && news.informative);
  const resembled = call.similarTo === null ? undefined : prior.find((a) => a.intent === call.similarTo);
  const sameAnswer = resembled !== undefined && resembled.resultHash === result && news.informative;
  const explored = resembled !== undefined && resembled.resultHash !== result;
  if (!sameAnswer && (fresh || news.flipped || explored))
    return Object.keys(s.nearDuplicates).length === 0 ? s.nearDuplicates : {};
  const chain = sameAnswer ? (own(s.nearDuplicates, call.tool) ?? 0) + 1 : 0;
  if (chain === 0 && own(s.nearDuplicates, call.tool) === undefined) return s.nearDuplicates;
  return { ...s.nearDuplicates, [call.tool]: chain };
}
