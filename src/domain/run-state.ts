import type { EventOf, ResultKind, RunStatus, StopReport } from './events.js';
import type { RunPolicy } from './policy.js';

/** One call in the current progress window (the calls since new information last arrived). */
export interface WindowEntry {
  readonly callId: string;
  readonly fingerprint: string;
  readonly tool: string;
  readonly kind: ResultKind | null;
  readonly progressed: boolean;
  /** The class of the result it got, named in a stop's message; absent in older snapshots. */
  readonly result?: string;
}

/**
 * The call awaiting its result, as its request recorded it. Its `intent` is absent in older
 * snapshots (then computed from `argsJson`); its cost estimate is charged when the result reports
 * no cost of its own.
 */
export interface InFlightCall extends Omit<EventOf<'ToolCallRequested'>, 'type' | 'similarity'> {
  readonly startedAtMs: number;
}

export interface AskedEntry {
  readonly intent: string;
  /** The raw result hash: what a rephrasing is compared with (its numbers may be its answer). */
  readonly resultHash: string;
  /** The result class (volatile parts masked): whether the same question was answered differently. */
  readonly result?: string;
}

/** One failure (by result class) and the calls that returned it since the world last changed. */
export interface FailureSeen {
  readonly result: string;
  readonly callIds: readonly string[];
}

/** How many unrelated calls of the run returned one answer (see news.ts). */
export interface AnswerCount {
  readonly resultHash: string;
  readonly callers: number;
}

export type OperationStatus = 'claimed' | 'completed' | 'in_doubt';
interface OperationEntry {
  readonly status: OperationStatus;
  readonly callId: string;
  readonly resultJson: string | null;
}

/**
 * Everything the guard knows about one run. Bounded: the window, the recent calls, the results
 * seen per call and the near-duplicate memory are capped, so a 10,000-call run costs what a
 * 10-call run does. Plain data (arrays and records, no Maps) so snapshots compare and serialise.
 */
export interface RunState {
  readonly runId: string;
  readonly status: RunStatus;
  readonly policy: RunPolicy | null;
  readonly taskType: string | null;
  readonly tenant: string | null;
  /** The supervisor run this one is a sub-agent of, or null. */
  readonly parentRunId: string | null;
  readonly seq: number;
  readonly startedAtMs: number;
  readonly lastAtMs: number;
  readonly steps: number;
  readonly toolCalls: number;
  readonly tokens: number;
  readonly costUsd: number;
  readonly perTool: Readonly<Record<string, number>>;
  readonly sameTool: { readonly tool: string; readonly count: number } | null;
  readonly progressVersion: number;
  readonly window: readonly WindowEntry[];
  readonly recent: readonly WindowEntry[];
  /** (call fingerprint, result hash) pairs seen, oldest first, as 53-bit numbers: cheap to search and copy. */
  readonly seen: readonly number[];
  readonly noProgress: number;
  /**
   * Whether the caller reports progress versions: once it has, they alone decide what counts as
   * progress for no_progress (a new result under an unmoved version is still no progress).
   */
  readonly tracksProgress: boolean;
  readonly answers: readonly AnswerCount[];
  /** (call, result) pairs seen since the last call that may have changed the world (news.ts). */
  readonly sinceChange: readonly number[];
  /** Flips back to a known result counted as progress since something new last arrived. */
  readonly revisits: number;
  /** Failures returned since the last change of the world or outside news (repeated-failure.ts). */
  readonly failures: readonly FailureSeen[];
  /** Per tool, the intents (args without paging and id fields) asked since the last outside news, with the answer each got. */
  readonly asked: Readonly<Record<string, readonly AskedEntry[]>>;
  /** Per tool, near-duplicate asks in a row that got the very answer of the ask they resemble. */
  readonly nearDuplicates: Readonly<Record<string, number>>;
  readonly retries: Readonly<Record<string, number>>;
  readonly polls: Readonly<Record<string, number>>;
  readonly blocked: Readonly<Record<string, string>>;
  readonly inFlight: InFlightCall | null;
  readonly waitUntilMs: number | null;
  readonly waitCallFingerprint: string | null;
  readonly operations: Readonly<Record<string, OperationEntry>>;
  readonly succeededTools: readonly string[];
  readonly warned: readonly string[];
  /** Loop rules that already warned in this window (`warn_first`): the next firing stops. */
  readonly ruleWarned: readonly string[];
  readonly lastCheckpoint: { readonly id: string; readonly progressVersion: number } | null;
  readonly report: StopReport | null;
  readonly resumes: number;
}

export const WINDOW_CAP = 32;
export const RECENT_CAP = 6;
/** Enough to tell a loop from new information over the last few dozen distinct calls, cheap to search. */
export const SEEN_CAP = 64;
export const ASKED_CAP = 8;
export const SUCCEEDED_CAP = 32;

export function initialState(runId: string): RunState {
  return {
    runId,
    status: 'NEW',
    policy: null,
    taskType: null,
    tenant: null,
    parentRunId: null,
    seq: 0,
    startedAtMs: 0,
    lastAtMs: 0,
    steps: 0,
    toolCalls: 0,
    tokens: 0,
    costUsd: 0,
    perTool: {},
    sameTool: null,
    progressVersion: 0,
    window: [],
    recent: [],
    seen: [],
    noProgress: 0,
    tracksProgress: false,
    answers: [],
    sinceChange: [],
    revisits: 0,
    failures: [],
    asked: {},
    nearDuplicates: {},
    retries: {},
    polls: {},
    blocked: {},
    inFlight: null,
    waitUntilMs: null,
    waitCallFingerprint: null,
    operations: {},
    succeededTools: [],
    warned: [],
    ruleWarned: [],
    lastCheckpoint: null,
    report: null,
    resumes: 0,
  };
}

/**
 * A (call, result) pair as a 53-bit number (cyrb53): cheaper to search than strings, and this runs
 * for every result. A collision (about 1 in 2^46 in one run's memory) reads as "no new result" once.
 */
export function seenPair(fingerprint: string, resultHash: string): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  // The characters of `${fingerprint}\u0000${resultHash}`, read without building that string.
  for (let i = 0; i < fingerprint.length; i++) {
    const c = fingerprint.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1, 2654435761);
  h2 = Math.imul(h2, 1597334677);
  for (let i = 0; i < resultHash.length; i++) {
    const c = resultHash.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

/**
 * A copy of the state, written out field by field: V8 builds this literal much faster than it
 * spreads a 35-field object, and every event folds a state. A field forgotten here is a type error.
 */
export function copyState(s: RunState): RunState {
  return {
    runId: s.runId,
    status: s.status,
    policy: s.policy,
    taskType: s.taskType,
    tenant: s.tenant,
    parentRunId: s.parentRunId,
    seq: s.seq,
    startedAtMs: s.startedAtMs,
    lastAtMs: s.lastAtMs,
    steps: s.steps,
    toolCalls: s.toolCalls,
    tokens: s.tokens,
    costUsd: s.costUsd,
    perTool: s.perTool,
    sameTool: s.sameTool,
    progressVersion: s.progressVersion,
    window: s.window,
    recent: s.recent,
    seen: s.seen,
    noProgress: s.noProgress,
    tracksProgress: s.tracksProgress,
    answers: s.answers,
    sinceChange: s.sinceChange,
    revisits: s.revisits,
    failures: s.failures,
    asked: s.asked,
    nearDuplicates: s.nearDuplicates,
    retries: s.retries,
    polls: s.polls,
    blocked: s.blocked,
    inFlight: s.inFlight,
    waitUntilMs: s.waitUntilMs,
    waitCallFingerprint: s.waitCallFingerprint,
    operations: s.operations,
    succeededTools: s.succeededTools,
    warned: s.warned,
    ruleWarned: s.ruleWarned,
    lastCheckpoint: s.lastCheckpoint,
    report: s.report,
    resumes: s.resumes,
  };
}

export type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** The state with `changes` applied: a fresh copy, so nothing that holds `s` sees a change. */
export function patch(s: RunState, changes: Partial<RunState>): RunState {
  return Object.assign(copyState(s), changes);
}
