import type { EventOf, RecordedEvent } from './events.js';
import { hasKeys, own } from './input-check.js';
import { intentOf } from './intent.js';
import { applyLedgerFact, type KeyEntry, ledgerFactOf, type OperationEvent } from './ledger-rules.js';
import { nearDuplicatesAfter, newsOf } from './news.js';
import { failuresAfter } from './repeated-failure.js';
import {
  ASKED_CAP,
  copyState,
  type Mutable,
  patch,
  RECENT_CAP,
  type RunState,
  SEEN_CAP,
  SUCCEEDED_CAP,
  seenPair,
  WINDOW_CAP,
  type WindowEntry,
} from './run-state.js';

/** `list` plus `item`, keeping the newest `cap`: one new array, whatever the length. */
const capped = <T>(list: readonly T[], item: T, cap: number): readonly T[] => {
  const next = list.length >= cap ? list.slice(list.length - cap + 1) : list.slice();
  next.push(item);
  return next;
};

const EMPTY: Readonly<Record<string, never>> = Object.freeze({});

/** A record without `key`; the same record when it has no such key (the usual case, and free: `hasKeys`). */
const without = <V>(rec: Readonly<Record<string, V>>, key: string): Readonly<Record<string, V>> => {
  if (!hasKeys(rec) || !Object.hasOwn(rec, key)) return rec;
  const { [key]: _, ...rest } = rec;
  return rest;
};

function completed(s: RunState, e: EventOf<'ToolCallCompleted'>): RunState {
  const call = s.inFlight;
  if (call === null || call.callId !== e.callId) return s;
  const fp = call.fingerprint;
  const version = Math.max(s.progressVersion, e.progressVersion ?? 0, call.progressVersion ?? 0);
  const outsideNews = version > s.progressVersion || call.afterUserTurn;
  const tracksProgress = s.tracksProgress || call.progressVersion !== null || e.progressVersion !== null;
  const intent = call.intent ?? intentOf(call.argsJson);
  const prior = outsideNews ? [] : (own(s.asked, call.tool) ?? []);
  // News is judged on the result's class (volatile parts masked); the raw hash is only recorded.
  const result = e.resultClass ?? e.resultHash;
  const pair = seenPair(fp, result);
  const known = s.seen.includes(pair);
  const previous = prior.find((a) => a.intent === intent);
  const news = newsOf(s, {
    pair,
    resultHash: e.resultHash,
    resultClass: result,
    says: e.informative,
    answersAsk: e.answersAsk,
    failed: e.failed === true,
    known,
    rephrased: call.similarTo !== null,
    previousClass: previous === undefined ? undefined : (previous.result ?? previous.resultHash),
  });
  const askedNow = [
    ...prior.filter((a) => a.intent !== intent),
    { intent, resultHash: e.resultHash, result },
  ];
  const asked =
    e.kind === 'RETRYABLE'
      ? outsideNews
        ? {}
        : s.asked
      : {
          ...(outsideNews ? {} : s.asked),
          [call.tool]: askedNow.length > ASKED_CAP ? askedNow.slice(-ASKED_CAP) : askedNow,
        };
  const blocked = outsideNews ? {} : s.blocked;
  // New information, the only thing that opens a new window: a higher progress version, a user
  // turn since the last call, a result this exact call has never returned, or (a bounded number
  // of times) one that differs from what it returned last time. A check of what a change did is
  // progress for no_progress only (below), so cycles through it still show (news.ts).
  const fresh = outsideNews || !known;
  const progressed = e.kind !== 'RETRYABLE' && (fresh || news.flipBack);
  const entry: WindowEntry = {
    callId: e.callId,
    fingerprint: fp,
    tool: call.tool,
    kind: e.kind,
    progressed,
    result,
  };
  // Built by assignment into a fresh copy: the hottest fold of all, once per call.
  const n = copyState(s) as Mutable<RunState>;
  n.inFlight = null;
  n.progressVersion = version;
  n.tracksProgress = tracksProgress;
  n.tokens = s.tokens + e.tokens;
  n.costUsd = s.costUsd + e.costUsd;
  n.asked = asked;
  n.nearDuplicates = nearDuplicatesAfter(s, call, e.kind, e.resultHash, prior, news, outsideNews, known);
  n.blocked = blocked;
  if (e.kind === 'RETRYABLE') {
    n.retries = { ...s.retries, [fp]: (s.retries[fp] ?? 0) + 1 };
    n.window = capped(s.window, entry, WINDOW_CAP);
    n.recent = capped(s.recent, entry, RECENT_CAP);
    return n;
  }
  n.answers = news.answers;
  n.failures = failuresAfter(s.failures, e.callId, result, e.failed === true, outsideNews || news.changed);
  n.sinceChange = news.sinceChange;
  n.revisits = fresh ? 0 : news.flipBack || news.recheck ? s.revisits + 1 : s.revisits;
  // Polls are bounded by maxPolls and retries by maxRetries: neither counts as spinning here.
  const counts = e.kind !== 'PENDING';
  n.seen = known ? s.seen : capped(s.seen, pair, SEEN_CAP);
  n.window = progressed ? [entry] : capped(s.window, entry, WINDOW_CAP);
  n.ruleWarned = progressed && s.ruleWarned.length > 0 ? [] : s.ruleWarned;
  n.recent = capped(s.recent, entry, RECENT_CAP);
  // The caller's progress version, once reported, is the authority: a new result under an unmoved
  // version is still no progress (the divergent loop). Without one, novelty is the signal.
  const moved = tracksProgress ? outsideNews : progressed || news.recheck;
  n.noProgress = moved ? 0 : counts ? s.noProgress + 1 : s.noProgress;
  n.retries = progressed ? EMPTY : without(s.retries, fp);
  n.polls =
    e.kind === 'PENDING'
      ? { ...s.polls, [fp]: progressed ? 0 : (s.polls[fp] ?? 0) + 1 }
      : without(s.polls, fp);
  if (e.kind === 'PRECONDITION') n.blocked = { ...blocked, [fp]: e.code ?? 'precondition' };
  if (e.kind === 'SUCCESS' && !s.succeededTools.includes(call.tool)) {
    n.succeededTools = capped(s.succeededTools, call.tool, SUCCEEDED_CAP);
  }
  return n;
}

function executed(s: RunState): RunState {
  const call = s.inFlight;
  if (call === null) return s;
  const n = copyState(s) as Mutable<RunState>;
  n.steps = s.steps + 1;
  n.perTool = { ...s.perTool, [call.tool]: (own(s.perTool, call.tool) ?? 0) + 1 };
  n.sameTool = { tool: call.tool, count: s.sameTool?.tool === call.tool ? s.sameTool.count + 1 : 1 };
  return n;
}

function apply(s: RunState, rec: RecordedEvent): RunState {
  const e = rec.event;
  const atMs = rec.atMs;
  switch (e.type) {
    case 'RunStarted':
      return patch(s, {
        policy: e.policy,
        taskType: e.taskType,
        tenant: e.tenant,
        parentRunId: e.parentRunId,
        startedAtMs: atMs,
        progressVersion: e.progressVersion,
      });
    case 'ToolCallRequested':
      return patch(s, {
        toolCalls: s.toolCalls + 1,
        inFlight: {
          callId: e.callId,
          fingerprint: e.fingerprint,
          tool: e.tool,
          argsJson: e.argsJson,
          intent: e.intent ?? intentOf(e.argsJson),
          operationKey: e.operationKey,
          sideEffect: e.sideEffect,
          afterUserTurn: e.afterUserTurn,
          progressVersion: e.progressVersion,
          startedAtMs: atMs,
          similarTo: e.similarTo,
          costEstimateUsd: e.costEstimateUsd,
        },
      });
    case 'GuardDecided': {
      const ruleWarned =
        e.warning !== null && e.rule !== null && !s.ruleWarned.includes(e.rule)
          ? [...s.ruleWarned, e.rule]
          : s.ruleWarned;
      if (e.phase === 'after') return patch(s, { ruleWarned });
      if (e.decision === 'execute') {
        const next = executed(s);
        return ruleWarned === s.ruleWarned ? next : patch(next, { ruleWarned });
      }
      return patch(s, { inFlight: null });
    }
    case 'ToolCallCompleted':
      return completed(s, e);
    case 'ModelUsageRecorded':
      return patch(s, { tokens: s.tokens + e.tokensIn + e.tokensOut, costUsd: s.costUsd + e.costUsd });
    case 'BudgetWarning':
      return patch(s, { warned: [...s.warned, e.budget] });
    case 'RunWaiting':
      // The wait (its status, deadline and call) is the run machine's to begin and to end.
      return s;
    case 'RunStopped':
      return patch(s, { report: e.report, inFlight: null });
    case 'RunResumed':
      return patch(s, {
        report: null,
        startedAtMs: atMs,
        policy: e.policy ?? s.policy,
        progressVersion: Math.max(s.progressVersion, e.progressVersion),
        window: [],
        recent: [],
        ruleWarned: [],
        noProgress: 0,
        revisits: 0,
        failures: [],
        asked: {},
        nearDuplicates: {},
        retries: {},
        polls: {},
        blocked: {},
        sameTool: null,
        resumes: s.resumes + 1,
      });
    case 'CheckpointRecorded':
      return patch(s, { lastCheckpoint: { id: e.checkpointId, progressVersion: e.progressVersion } });
    case 'OperationClaimed':
    case 'OperationCompleted':
    case 'OperationInDoubt':
    case 'OperationReleased':
      return operation(s, e, atMs);
    case 'FleetLoopDetected':
      // Belongs to no run: it is about many.
      return s;
  }
}

/** The run's own view of its operations, by the ledger's one set of rules. */
function operation(s: RunState, e: OperationEvent, atMs: number): RunState {
  const known = own(s.operations, e.operationKey);
  const owner = { runId: s.runId, callId: known?.callId ?? e.callId };
  const entry: KeyEntry | undefined =
    known === undefined
      ? undefined
      : known.status === 'completed'
        ? { status: 'completed', owner, resultJson: known.resultJson ?? 'null' }
        : known.status === 'in_doubt'
          ? { status: 'in_doubt', owner, reason: '' }
          : { status: 'claimed', owner, atMs };
  const { next, refused } = applyLedgerFact(
    entry,
    ledgerFactOf(e),
    { runId: s.runId, callId: e.callId },
    atMs,
  );
  if (refused !== null) return s;
  if (next === undefined) return patch(s, { operations: without(s.operations, e.operationKey) });
  const resultJson = next.status === 'completed' ? next.resultJson : null;
  return patch(s, {
    operations: { ...s.operations, [e.operationKey]: { status: next.status, callId: e.callId, resultJson } },
  });
}

/**
 * The pure fold of a run's data: the same events always give the same data, bit for bit, in any
 * process. It never writes the run's status nor its wait: those move with the run machine's
 * transitions (src/machines/run-machine.ts), and every reader folds through the machine
 * (`foldRun`), which calls this for the rest.
 */
export function evolve(s: RunState, rec: RecordedEvent): RunState {
  const next = apply(s, rec);
  // `apply` returns either `s` itself or an object it just made and nobody else holds: stamping
  // that one in place saves a copy of the whole state per event, and nothing observable mutates.
  if (next === s) return patch(s, { seq: rec.seq, lastAtMs: rec.atMs });
  const fresh = next as { seq: number; lastAtMs: number };
  fresh.seq = rec.seq;
  fresh.lastAtMs = rec.atMs;
  return next;
}
