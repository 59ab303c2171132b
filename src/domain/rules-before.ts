import { budgets } from './budget-rules.js';
import type { LedgerView } from './commands.js';
import { compared } from './compared-calls.js';
import { type Evidence, isTerminal } from './events.js';
import { ancestorVerdict, type FamilyView, treeSpend } from './family.js';
import type { CanonicalCall } from './fingerprint.js';
import { hasKeys, own } from './input-check.js';
import { type RunPolicy, toolPolicy } from './policy.js';
import { patch, type RunState, type WindowEntry } from './run-state.js';
import type { Similarity } from './similarity.js';
import { evidence, stopVerdict, underAction, type Verdict } from './verdict.js';
import { waitText } from './wait-text.js';

export interface CallRequest {
  readonly call: CanonicalCall;
  /** The call's intent (intent.ts `intentOf` of its canonical arguments). */
  readonly intent: string;
  readonly operationKey: string | null;
  readonly sideEffect: boolean;
  readonly costEstimateUsd: number | null;
  readonly ledger: LedgerView;
  readonly atMs: number;
  readonly afterUserTurn: boolean;
  readonly progressVersion: number | null;
  readonly family: FamilyView | undefined;
}

/**
 * News from outside (a user turn, a higher progress version) arrives with the request: the loop
 * rules then judge against a fresh window, as they will once the call's result is recorded.
 */
function withNews(s: RunState, r: CallRequest): RunState {
  const news = r.afterUserTurn || (r.progressVersion !== null && r.progressVersion > s.progressVersion);
  return news
    ? patch(s, { window: [], recent: [], asked: {}, nearDuplicates: {}, blocked: {}, ruleWarned: [] })
    : s;
}

export interface BeforeCheck {
  readonly verdict: Verdict;
  readonly similarTo: string | null;
  readonly similarity: number | null;
}

const short = (c: CanonicalCall) =>
  `${c.tool} ${c.argsJson.length > 120 ? `${c.argsJson.slice(0, 117)}...` : c.argsJson}`;
const refuse = (rule: string, message: string, ev: Evidence, extra: Partial<Verdict> = {}): Verdict => ({
  decision: 'refuse',
  rule,
  message,
  evidence: ev,
  ...extra,
});

function perCall(s: RunState, p: RunPolicy, r: CallRequest): Verdict | null {
  const { call } = r;
  const tool = toolPolicy(p, call.tool);
  const estimate = r.costEstimateUsd ?? tool.costUsd;
  if (p.maxCostUsd !== null && estimate !== null && s.costUsd + estimate > p.maxCostUsd) {
    const left = p.maxCostUsd - s.costUsd;
    return refuse(
      'cost_estimate',
      `Refused: ${call.tool} is estimated at $${estimate} but only $${left.toFixed(4)} is left. Choose a cheaper step or finish.`,
      evidence([call.fingerprint], {}, { estimateUsd: estimate, leftUsd: left, maxCostUsd: p.maxCostUsd }),
    );
  }
  const used = own(s.perTool, call.tool) ?? 0;
  if (tool.maxCalls !== null && used >= tool.maxCalls) {
    return refuse(
      'tool_budget',
      `Refused: ${call.tool} may be called ${tool.maxCalls} times per run and was called ${used} times. Use another tool or finish.`,
      evidence([call.fingerprint], { calls: used }, { maxCalls: tool.maxCalls }),
    );
  }
  const same = s.sameTool?.tool === call.tool ? s.sameTool.count : 0;
  if (p.maxConsecutiveSameTool !== null && same >= p.maxConsecutiveSameTool) {
    return stopVerdict(
      'before',
      'consecutive_same_tool',
      `Stopped: ${call.tool} was called ${same} times in a row (limit ${p.maxConsecutiveSameTool}).`,
      evidence([call.fingerprint], { consecutive: same }, { limit: p.maxConsecutiveSameTool }),
    );
  }
  const blocked = hasKeys(s.blocked) ? s.blocked[call.fingerprint] : undefined;
  if (blocked !== undefined) {
    return refuse(
      'precondition_unchanged',
      `Refused: ${short(call)} failed on a precondition (${blocked}) and nothing has changed since. Fix the precondition first; the same call will not run again until then.`,
      evidence([call.fingerprint], {}, {}),
      { unmetPrecondition: blocked },
    );
  }
  return null;
}

function exactRepeat(s: RunState, p: RunPolicy, call: CanonicalCall): Verdict | null {
  const repeats = s.window.filter(
    (w) => w.fingerprint === call.fingerprint && w.kind !== 'PENDING' && w.kind !== 'RETRYABLE',
  );
  const n = repeats.length;
  if (n < p.sameCallLimit) return null;
  return underAction(
    s,
    p.rules.exact_repeat,
    stopVerdict(
      'before',
      'exact_repeat',
      `Stopped: ${short(call)} was already called ${n} times with no new result since the last progress (${compared(repeats)}). Repeating it will not help: change the approach or give your final answer.`,
      evidence([call.fingerprint], { repeats: n }, { sameCallLimit: p.sameCallLimit }),
    ),
  );
}

/** A-B-A-B or A-B-C-A-B-C where the repeated period so far brought nothing new. */
function shortCycle(s: RunState, p: RunPolicy, call: CanonicalCall): Verdict | null {
  // A cycle of 2 or 3 needs this call to be the one made 2 or 3 calls ago: check that before building anything.
  const r = s.recent;
  const fp = call.fingerprint;
  if (r[r.length - 2]?.fingerprint !== fp && r[r.length - 3]?.fingerprint !== fp) return null;
  const seq = [...s.recent, { fingerprint: call.fingerprint, progressed: false, kind: null }];
  for (const period of [2, 3]) {
    if (seq.length < 2 * period) continue;
    const tail = seq.slice(seq.length - 2 * period);
    const first = tail.slice(0, period).map((e) => e.fingerprint);
    if (new Set(first).size < 2) continue;
    if (!tail.every((e, i) => i < period || e.fingerprint === first[i - period])) continue;
    if (tail.slice(period, -1).some((e) => e.progressed || e.kind === 'PENDING' || e.kind === 'RETRYABLE'))
      continue;
    const stop = stopVerdict(
      'before',
      'short_cycle',
      `Stopped: the calls are going round in a cycle of ${period} (${first.length} distinct calls repeating with the same results: ${compared(tail.slice(0, -1) as WindowEntry[])}). Break the cycle: try something different or give your final answer.`,
      evidence(first, { period, cycles: 2 }, {}),
    );
    return underAction(s, p.rules.short_cycle, stop);
  }
  return null;
}

function nearDuplicate(
  s: RunState,
  p: RunPolicy,
  call: CanonicalCall,
  intent: string,
  similarity: Similarity,
): BeforeCheck | null {
  const asked = own(s.asked, call.tool) ?? [];
  if (asked.length === 0) return null;
  // The same intent is a repeat or a next page: the exact-repeat rule's business, not this one's.
  if (asked.some((a) => a.intent === intent)) return null;
  let best = 0;
  let bestText: string | null = null;
  for (const { intent: text } of asked) {
    const sim = similarity(text, intent);
    if (sim > best) [best, bestText] = [sim, text];
  }
  if (bestText === null || best < p.nearDuplicate.threshold) return null;
  const similarTo = bestText;
  const n = own(s.nearDuplicates, call.tool) ?? 0;
  const rounded = Math.round(best * 1000) / 1000;
  if (n < p.nearDuplicate.limit) return { verdict: execute, similarTo, similarity: rounded };
  const stop = stopVerdict(
    'before',
    'near_duplicate',
    `Stopped: ${call.tool} was asked near-identical things ${n} times in a row and each time got the same answer as before (similarity ${rounded}). Rephrasing again will not help: try a different source or give your final answer.`,
    evidence(
      [call.fingerprint],
      { nearDuplicates: n },
      { threshold: p.nearDuplicate.threshold, limit: p.nearDuplicate.limit, similarity: rounded },
    ),
  );
  const v = underAction(s, p.rules.near_duplicate, stop);
  return v === null ? null : { verdict: v, similarTo, similarity: rounded };
}

const execute: Verdict = { decision: 'execute', rule: null, message: 'ok', evidence: evidence([], {}, {}) };

/** The guard's answer before a call, rules in order of precedence. */
export function checkBefore(
  prior: RunState,
  p: RunPolicy,
  r: CallRequest,
  similarity: Similarity,
): BeforeCheck {
  const s = withNews(prior, r);
  const plain = (verdict: Verdict): BeforeCheck => ({ verdict, similarTo: null, similarity: null });
  const { call } = r;
  if (isTerminal(s.status)) {
    return plain(
      refuse(
        'run_stopped',
        `Refused: this run has ended (${s.status}${s.report ? `: ${s.report.guardReason}` : ''}). No further call of it runs.`,
        evidence([call.fingerprint], {}, {}),
      ),
    );
  }
  if (r.operationKey !== null) {
    const entry = own(s.operations, r.operationKey);
    const cached =
      entry?.status === 'completed'
        ? entry.resultJson
        : r.ledger.status === 'completed'
          ? r.ledger.resultJson
          : null;
    if (cached !== null && cached !== undefined) {
      return plain({
        decision: 'return_cached_success',
        rule: 'idempotency',
        message: `Already done: operation ${r.operationKey} completed before; returning its recorded result instead of running it again.`,
        evidence: evidence([call.fingerprint], {}, {}),
        resultJson: cached,
      });
    }
    // The shared ledger says the operation is running (another run took it over, or this run's
    // timed-out attempt is still running in its process): its outcome is coming, so wait for it,
    // even where this run's own record still has it in doubt.
    if (r.ledger.status === 'claimed') {
      return plain({
        decision: 'wait',
        rule: 'operation_in_flight',
        message: `Wait: operation ${r.operationKey} is in flight in run ${r.ledger.byRun}; its result will be returned once recorded.`,
        evidence: evidence([call.fingerprint], {}, {}),
      });
    }
    if (entry?.status === 'in_doubt' || r.ledger.status === 'in_doubt') {
      return plain(
        stopVerdict(
          'before',
          'in_doubt',
          `Stopped: operation ${r.operationKey} may or may not have happened; a person must settle it before anything runs again.`,
          evidence([call.fingerprint], {}, {}),
          'NEEDS_HUMAN',
          `outcome of operation ${r.operationKey}`,
        ),
      );
    }
  }
  if (s.status === 'WAITING' && s.waitUntilMs !== null && r.atMs < s.waitUntilMs) {
    if (r.sideEffect) {
      return plain(
        refuse(
          'side_effect_gate',
          `Refused: the run is waiting; it may go on ${waitText(s.waitUntilMs, r.atMs)}, and no side-effecting tool runs while it waits.`,
          evidence([call.fingerprint], {}, { waitUntilMs: s.waitUntilMs }),
        ),
      );
    }
    if (s.waitCallFingerprint === call.fingerprint) {
      return plain({
        decision: 'wait',
        rule: 'backoff',
        message: `Wait: retry ${call.tool} ${waitText(s.waitUntilMs, r.atMs)}, not before.`,
        evidence: evidence([call.fingerprint], {}, { waitUntilMs: s.waitUntilMs }),
        waitUntilMs: s.waitUntilMs,
      });
    }
  }
  // A supervisor's budgets and cost estimates count what its sub-agents have used too.
  const spent = r.family === undefined ? s : patch(s, treeSpend(s, r.family.below));
  const v =
    budgets(spent, p, r.atMs) ??
    ancestorVerdict(r.family, r.costEstimateUsd ?? toolPolicy(p, call.tool).costUsd) ??
    perCall(spent, p, r) ??
    exactRepeat(s, p, call) ??
    shortCycle(s, p, call);
  if (v !== null && v.decision !== 'execute') return plain(v);
  const near = nearDuplicate(s, p, call, r.intent, similarity);
  if (near !== null && near.verdict.decision !== 'execute') return near;
  const verdict = v ?? near?.verdict ?? execute;
  return { verdict, similarTo: near?.similarTo ?? null, similarity: near?.similarity ?? null };
}
