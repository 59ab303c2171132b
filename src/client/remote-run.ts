import {
  type Decision,
  type Evidence,
  errorOf,
  isErrorCode,
  jsonValue,
  LoopguardError,
  type RunStatus,
  type StopReport,
} from '../domain/index.js';
import type { ReissueNote } from '../ports/ledger.js';
import {
  type CallHooks,
  type CallRequest,
  insideOwnTool,
  recordedResult,
  reentrantCall,
  runningTool,
} from '../runtime/call-request.js';
import { type CallDecision, type CallResult, executedResult, notRunResult } from '../runtime/call-result.js';
import { executeTool, type ToolFn } from '../runtime/execute-tool.js';
import type { Run, RunView } from '../runtime/run.js';
import {
  emptyRequest,
  type RequestType,
  type WireDecision,
  type WireRequest,
} from '../service/service-topics.js';
import type { RemoteGuard } from './remote-guard.js';

/** The run as a remote handle knows it: the Run interface's view, from the last decision. */
export type RemoteRunState = RunView;

/** Recorded JSON as a value (the raw text when it is not JSON): a decision's evidence or report. */
const parse = <T>(json: string | null, fallback: T): T =>
  json === null ? fallback : (jsonValue(json, json) as T);

/** A decision from the wire as the library reads its recorded one. */
const wireDecision = (d: WireDecision): CallDecision => ({
  decision: d.decision as Decision,
  rule: d.rule,
  message: d.message,
  evidence: parse<Evidence>(d.evidence_json, {} as Evidence),
  warning: d.warning,
  waitUntilMs: d.wait_until_ms,
  resultJson: d.result_json,
});

/** One run behind the remote guard; calls of a run go one at a time, as in the library. */
export class RemoteRun implements Run {
  private queue: Promise<unknown> = Promise.resolve();
  private last: RemoteRunState = { status: 'NEW', seq: 0, report: null };
  /**
   * A request of this run that got no decision: the worker may have decided it (a call may be in
   * flight there), so it is sent again, same id, before anything else of the run.
   */
  private unanswered: WireRequest | null = null;

  constructor(
    private readonly guard: RemoteGuard,
    readonly runId: string,
  ) {}

  /** The run as of the last decision this handle received. */
  get state(): RemoteRunState {
    return this.last;
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** Sends a request of this run; an `error` decision rejects with its code and field. */
  async send(
    type: RequestType,
    fields: Partial<WireRequest>,
    requestId = this.guard.newRequestId(),
  ): Promise<WireDecision> {
    await this.settleUnanswered();
    const req: WireRequest = { ...emptyRequest(requestId, this.runId, type, this.guard.now()), ...fields };
    return this.taken(await this.ask(req));
  }

  /** The request's decision, publishing it again (same id) after each timeout, `resends` times. */
  private async ask(req: WireRequest): Promise<WireDecision> {
    for (let attempt = 0; ; attempt++) {
      try {
        const d = await this.guard.request(req);
        this.unanswered = null;
        return d;
      } catch (e) {
        const timedOut = e instanceof LoopguardError && e.code === 'decision_timeout';
        if (timedOut && attempt < this.guard.resends) continue;
        if (timedOut) this.unanswered = req;
        throw e;
      }
    }
  }

  /**
   * Learns what became of the request that got no decision. A TOOL_CALL the worker let run was
   * never run here (its step rejected): its result says so, which ends the call in flight and
   * gives back its side-effect claim, certainly unused.
   */
  private async settleUnanswered(): Promise<void> {
    const req = this.unanswered;
    if (req === null) return;
    const d = this.taken(await this.ask(req));
    if (req.type !== 'TOOL_CALL' || d.decision !== 'execute') return;
    this.taken(
      await this.ask({
        ...emptyRequest(this.guard.newRequestId(), this.runId, 'TOOL_RESULT', this.guard.now()),
        call_id: req.request_id,
        result_kind: 'RETRYABLE',
        result_code: 'not_run',
        in_doubt: false,
      }),
    );
  }

  /** A decision as this run takes it: an `error` rejects with its code and field. */
  private taken(d: WireDecision): WireDecision {
    const requestId = d.request_id;
    if (d.decision === 'error')
      throw errorOf(d.error_code !== null && isErrorCode(d.error_code) ? d.error_code : 'error', d.message, {
        details: { field: d.error_field, requestId, errorCode: d.error_code },
      });
    this.last = {
      status: d.status as RunStatus,
      seq: d.seq,
      report: parse<StopReport | null>(d.report_json, null),
    };
    return d;
  }

  call(req: CallRequest, fn: ToolFn, hooks: CallHooks = {}): Promise<CallResult> {
    if (insideOwnTool(this)) return Promise.reject(reentrantCall(this.runId));
    return this.serial(() => this.callNow(req, fn, hooks));
  }

  private async callNow(req: CallRequest, fn: ToolFn, hooks: CallHooks): Promise<CallResult> {
    const reconcile = req.operationKey === undefined ? undefined : hooks.reconcile;
    const fields: Partial<WireRequest> = {
      tool: req.tool,
      args_json: JSON.stringify(req.args ?? {}),
      operation_key: req.operationKey ?? null,
      side_effect: req.sideEffect ?? null,
      cost_estimate_usd: req.costEstimateUsd ?? null,
      progress_version: req.progressVersion ?? null,
      after_user_turn: req.afterUserTurn ?? null,
      can_reconcile: reconcile === undefined ? null : true,
    };
    let before = await this.send('TOOL_CALL', fields);
    if (before.decision === 'reconcile' && reconcile !== undefined && req.operationKey !== undefined) {
      // The operation is in doubt and the worker recorded nothing: the hook's answer goes with the
      // call, sent again as a new request; the worker settles the key and decides on it, as the
      // library's claim does. A second `reconcile` (in doubt again meanwhile) is not asked again.
      const answer = await reconcile(req.operationKey);
      before = await this.send('TOOL_CALL', {
        ...fields,
        reconciled: answer.happened,
        // Redacted here as a tool's result is, before it is published (the worker redacts again).
        result_json: recordedResult(answer.result, this.guard.hashing),
      });
    }
    if (before.decision !== 'execute') return notRunResult(wireDecision(before), this.last);
    // Only an execute decision, durable in the log before it reached us, runs the tool.
    const ran = await runningTool(this, () =>
      executeTool(
        fn,
        this.guard.stepTimeoutMs,
        req.sideEffect ?? req.operationKey !== undefined,
        this.guard.hashing,
      ),
    );
    const after = await this.send('TOOL_RESULT', {
      // The request id of a TOOL_CALL is its call id.
      call_id: before.request_id,
      result_kind: ran.kind,
      result_code: ran.code,
      result_json: ran.resultJson,
      result_hash: ran.resultHash,
      retry_after_ms: ran.retryAfterMs,
      tokens: ran.tokens,
      cost_usd: ran.costUsd,
      terminal: ran.terminal,
      in_doubt: ran.inDoubt && req.operationKey !== undefined,
      progress_version: ran.progressVersion,
    });
    return executedResult(ran, wireDecision(after), this.last);
  }

  /** Sends a request of this run in its turn, after the calls before it. */
  private step(type: RequestType, fields: Partial<WireRequest>): Promise<WireDecision> {
    return this.serial(() => this.send(type, fields));
  }

  /** Counts a model call's tokens and cost toward the run's budgets, as the library's does. */
  async recordModelUsage(u: { tokensIn: number; tokensOut: number; costUsd: number }): Promise<void> {
    await this.step('MODEL_USAGE', { tokens_in: u.tokensIn, tokens_out: u.tokensOut, cost_usd: u.costUsd });
  }

  /** Records a checkpoint (a safe point a stop report names); returns its id. */
  async checkpoint(checkpointId?: string): Promise<string> {
    const d = await this.step('CHECKPOINT', { checkpoint_id: checkpointId ?? null });
    return d.checkpoint_id ?? '';
  }

  async settle(
    operationKey: string,
    verdict: { happened: boolean; result?: unknown; settledBy: string },
  ): Promise<void> {
    await this.step('SETTLE', {
      operation_key: operationKey,
      happened: verdict.happened,
      result_json: verdict.result === undefined ? null : JSON.stringify(verdict.result),
      settled_by: verdict.settledBy,
    });
  }

  /** The note comes back as the worker recorded it (keys redacted under the workers' key). */
  async reissue(
    oldKey: string,
    newKey: string,
    why: { reason: string; approvedBy?: string },
  ): Promise<ReissueNote> {
    const d = await this.step('REISSUE', {
      operation_key: oldKey,
      new_operation_key: newKey,
      reason: why.reason,
      approved_by: why.approvedBy ?? null,
    });
    // A worker that knows REISSUE answers with the note; one that does not refuses the type (an error).
    return JSON.parse(d.result_json as string) as ReissueNote;
  }

  async finish(r: { verified: boolean; gaps?: readonly string[] }): Promise<RemoteRunState> {
    await this.step('FINISH', { verified: r.verified, gaps: r.gaps ? [...r.gaps] : null });
    return this.last;
  }

  async cancel(reason: string): Promise<RemoteRunState> {
    await this.step('CANCEL', { reason });
    return this.last;
  }
}
