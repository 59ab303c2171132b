import {
  callIsSideEffect,
  type Hashing,
  IllegalStateError,
  inputError,
  isTerminal,
  type RunState,
  redactText,
  type TerminalState,
  textProblem,
} from '../domain/index.js';
import type { CommandInput, RunActor, RunSnapshot } from '../machines/index.js';
import type { Ledger, ReissueNote } from '../ports/ledger.js';
import type { RunStream } from '../ports/run-stream.js';
import type { CallObservation, GuardTelemetry } from '../telemetry/call-telemetry.js';
import {
  type CallHooks,
  type CallRequest,
  insideOwnTool,
  namesProblem,
  recordedResult,
  reentrantCall,
  requestProblem,
  runningTool,
} from './call-request.js';
import {
  type CallResult,
  callEnd,
  decision,
  executedResult,
  notRunResult,
  recordedDecision,
} from './call-result.js';
import { CommandPath, reissueOperation } from './command-path.js';
import { executeTool, type ToolFn } from './execute-tool.js';
import { interruptedCompletion } from './interrupted-call.js';
import type { LateEffects } from './late-effects.js';
import type { Run } from './run.js';
import { type RunFamily, withFamily } from './run-family.js';
import { RunWriter } from './run-writer.js';

/** A run of the library's guard, in process (see Run). */
export class GuardedRun implements Run {
  private queue: Promise<unknown> = Promise.resolve();
  private calls = 0;
  private readonly writer: RunWriter;
  private readonly path: CommandPath;
  /** Whether this run's end has been passed on to its sub-agents. */
  private cascaded = false;

  constructor(
    private readonly actor: RunActor,
    store: RunStream,
    private readonly ledger: Ledger,
    private readonly hashing: Hashing,
    private readonly family: RunFamily,
    private readonly telemetry: GuardTelemetry,
    private readonly late: LateEffects,
  ) {
    this.writer = new RunWriter(actor, store, hashing, (records) => this.telemetry.recorded(records));
    this.path = new CommandPath({
      actor,
      boundary: this.writer,
      ledger,
      hashing,
      withContext: (cmd) => withFamily(cmd, family.view(this.runId)),
      late,
    });
  }

  get runId(): string {
    return this.actor.runId;
  }

  get state(): RunState {
    return this.actor.state;
  }

  /** The run machine's XState snapshot: `value` the run's status, `context` its state. */
  getSnapshot(): RunSnapshot {
    return this.actor.getSnapshot();
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next.then((value) => this.cascade().then(() => value));
  }

  /** Once this run has ended, so do its live sub-agents (outside its own queue: they wait on theirs). */
  private async cascade(): Promise<void> {
    if (this.cascaded || !isTerminal(this.actor.state.status)) return;
    this.cascaded = true;
    await this.family.ended(this.runId);
  }

  /** Writes what is held, then refuses to record anything more: Guard.close does this for every run. */
  async close(): Promise<void> {
    if (this.writer.holding) await this.serial(() => this.writer.close());
    else await this.writer.close();
  }

  call(req: CallRequest, fn: ToolFn, hooks: CallHooks = {}): Promise<CallResult> {
    if (insideOwnTool(this)) return Promise.reject(reentrantCall(this.runId));
    const bad = requestProblem(req);
    if (bad !== null) return Promise.reject(bad);
    const guarded = (obs: CallObservation) => this.callNow(req, fn, hooks, obs);
    return this.serial(() => this.telemetry.observeCall(this.runId, req.tool, guarded, callEnd));
  }

  private async callNow(
    req: CallRequest,
    fn: ToolFn,
    hooks: CallHooks,
    obs: CallObservation,
  ): Promise<CallResult> {
    const policy = this.actor.state.policy;
    if (policy === null)
      throw new IllegalStateError('run_not_started', `run ${this.runId} has not been started`);
    const callId = `call-${this.actor.state.seq + 1}-${++this.calls}`;
    obs.named(callId);
    const sideEffect = callIsSideEffect(policy, req.tool, req.sideEffect, req.operationKey);
    const { records, before } = await this.path.requestCall(
      {
        type: 'RequestToolCall',
        callId,
        tool: req.tool,
        args: req.args,
        sideEffect,
        ...(req.operationKey !== undefined ? { operationKey: req.operationKey } : {}),
        ...(req.costEstimateUsd !== undefined ? { costEstimateUsd: req.costEstimateUsd } : {}),
        ...(req.progressVersion !== undefined ? { progressVersion: req.progressVersion } : {}),
        ...(req.afterUserTurn !== undefined ? { afterUserTurn: req.afterUserTurn } : {}),
      },
      hooks,
    );
    obs.decided(before.decision);
    if (before.decision !== 'execute')
      return notRunResult(recordedDecision(before, records, this.actor.state), this.actor.state);
    const call = this.actor.state.inFlight;
    const ran = await obs.runTool(() =>
      runningTool(this, () => executeTool(fn, policy.stepTimeoutMs, sideEffect, this.hashing)),
    );
    const key = call?.sideEffect === true ? call.operationKey : null;
    // Held from the timeout on, before the record of the call in doubt lets anyone see the key so.
    if (ran.late !== undefined && key !== null) this.late.track(key, { runId: this.runId, callId }, ran.late);
    const done = await this.path.completeCall({
      type: 'CompleteToolCall',
      callId,
      kind: ran.kind,
      resultHash: ran.resultHash,
      resultJson: ran.resultJson,
      terminal: ran.terminal,
      tokens: ran.tokens,
      // Only a side effect is ever in doubt: executeTool says so for one, and the decider holds to it.
      inDoubt: ran.inDoubt,
      ...(ran.costUsd !== null ? { costUsd: ran.costUsd } : {}),
      ...(ran.code !== null ? { code: ran.code } : {}),
      ...(ran.retryAfterMs !== null ? { retryAfterMs: ran.retryAfterMs } : {}),
      ...(ran.progressVersion !== null ? { progressVersion: ran.progressVersion } : {}),
    });
    return executedResult(
      ran,
      recordedDecision(decision(done, 'after'), done, this.actor.state),
      this.actor.state,
    );
  }

  async recordModelUsage(u: { tokensIn: number; tokensOut: number; costUsd: number }): Promise<void> {
    await this.serial(() => this.path.record({ type: 'RecordModelUsage', ...u }));
  }

  async finish(r: { verified: boolean; gaps?: readonly string[] }): Promise<RunState> {
    await this.serial(() =>
      this.path.record({ type: 'Finish', verified: r.verified, ...(r.gaps ? { gaps: r.gaps } : {}) }),
    );
    return this.state;
  }

  async cancel(reason: string): Promise<RunState> {
    await this.serial(() => this.path.cancel({ type: 'Cancel', reason }));
    return this.state;
  }

  async checkpoint(checkpointId?: string): Promise<string> {
    const recs = await this.serial(() =>
      this.path.record({ type: 'RecordCheckpoint', ...(checkpointId ? { checkpointId } : {}) }),
    );
    const e = recs[0]?.event;
    return e?.type === 'CheckpointRecorded' ? e.checkpointId : '';
  }

  async settle(
    operationKey: string,
    verdict: { happened: boolean; result?: unknown; settledBy: string },
  ): Promise<void> {
    const bad = namesProblem([
      ['operationKey', operationKey],
      ['verdict.settledBy', verdict?.settledBy],
    ]);
    if (bad !== null) throw bad;
    const resultJson = recordedResult(verdict.result, this.hashing);
    await this.serial(() =>
      this.path.settle({
        type: 'SettleOperation',
        operationKey,
        happened: verdict.happened,
        resultJson,
        settledBy: verdict.settledBy,
      }),
    );
  }

  async reissue(
    oldKey: string,
    newKey: string,
    why: { reason: string; approvedBy?: string },
  ): Promise<ReissueNote> {
    const bad = namesProblem([
      ['oldKey', oldKey],
      ['newKey', newKey],
    ]);
    if (bad !== null) throw bad;
    // A blank reason is the ledger's to refuse (reissue_refused); only a non-text one is bad input.
    const reason = textProblem(why?.reason);
    if (reason !== null) throw inputError('invalid_input', 'why.reason', reason);
    const approver = why.approvedBy === undefined ? null : textProblem(why.approvedBy);
    if (approver !== null) throw inputError('invalid_input', 'why.approvedBy', approver);
    const note: ReissueNote = {
      // Operation keys are recorded redacted; the ledger holds them the same way.
      oldKey: redactText(oldKey, this.hashing),
      newKey: redactText(newKey, this.hashing),
      // Redacted as the run's events are: the ledger is as readable as the log.
      reason: redactText(why.reason.trim(), this.hashing),
      approvedBy: why.approvedBy === undefined ? null : redactText(why.approvedBy, this.hashing),
      by: { runId: this.runId, callId: `reissue-${this.actor.state.seq}` },
    };
    return this.serial(() => reissueOperation(this.ledger, note));
  }

  /** Used by the run's family when an ancestor has ended: this run ends too (PARTIAL, parent_stopped). */
  async endWithParent(parentRunId: string, parentState: TerminalState): Promise<void> {
    await this.serial(async () => {
      if (isTerminal(this.actor.state.status)) return;
      // A relative loaded from the log (Guard.resume) may end on a call its dead process was
      // running: closed as a resume closes it, never left to block the end.
      const cutOff = await interruptedCompletion(this.actor.state, this.ledger, this.hashing);
      if (cutOff !== null) await this.path.record(cutOff);
      if (isTerminal(this.actor.state.status)) return;
      await this.path.record({ type: 'EndWithParent', parentRunId, parentState });
    });
  }

  /** Used by Guard.startRun. */
  async start(cmd: Extract<CommandInput, { type: 'StartRun' }>): Promise<void> {
    await this.serial(() => this.path.record(cmd));
  }

  /** Used by Guard.resume: records the approved precondition change. */
  async resumeWith(change: { preconditionChange: string; approvedBy?: string }): Promise<void> {
    await this.serial(async () => {
      const cutOff = await interruptedCompletion(this.actor.state, this.ledger, this.hashing);
      if (cutOff !== null) await this.path.record(cutOff);
      await this.path.record({ type: 'Resume', ...change });
      this.cascaded = false;
    });
  }
}
