import type { RunState } from '../domain/index.js';
import type { ReissueNote } from '../ports/ledger.js';
import type { CallHooks, CallRequest } from './call-request.js';
import type { CallResult } from './call-result.js';
import type { ToolFn } from './execute-tool.js';

/**
 * A run as every caller can see it, in the library and behind the service alike. The library's
 * run has the whole `RunState` (a superset); a remote run only what the worker's last decision said.
 */
export type RunView = Pick<RunState, 'status' | 'seq' | 'report'>;

/**
 * One run as the agent loop drives it: `GuardedRun` (in process) or `RemoteRun` (the guard as a
 * service, over Kafka). Calls go one at a time; a decision is durable before anything acts on it,
 * and only an `execute` runs the tool. `state` is the run as of its last recorded step.
 */
export interface Run {
  readonly runId: string;
  readonly state: RunView;
  /**
   * A guarded tool call: `fn` runs only on an execute decision; the result says what happened
   * (see CallResult). `hooks.reconcile` is asked when the call's operation key is in doubt (a
   * side effect whose outcome is unknown): its answer is recorded, and the call is decided on it.
   */
  call(req: CallRequest, fn: ToolFn, hooks?: CallHooks): Promise<CallResult>;
  /** Counts a model call's tokens and cost toward the run's budgets. */
  recordModelUsage(u: { tokensIn: number; tokensOut: number; costUsd: number }): Promise<void>;
  /** Records a checkpoint (a safe point a stop report names); returns its id. */
  checkpoint(checkpointId?: string): Promise<string>;
  /**
   * A person's verdict on an in-doubt operation: it happened (with its result, which later calls
   * get back cached) or it certainly did not (the key is free to run again).
   */
  settle(
    operationKey: string,
    verdict: { happened: boolean; result?: unknown; settledBy: string },
  ): Promise<void>;
  /**
   * A deliberate second execution: `newKey` may run although `oldKey` is done or in doubt. The
   * reason and approver are recorded in the ledger; the old entry stays untouched. Refused with
   * `reissue_refused` when the old key has no entry or is in flight, or the new key is in use.
   */
  reissue(oldKey: string, newKey: string, why: { reason: string; approvedBy?: string }): Promise<ReissueNote>;
  /** Ends the run by a verifier's verdict: COMPLETED when verified, else PARTIAL with its gaps. */
  finish(r: { verified: boolean; gaps?: readonly string[] }): Promise<RunView>;
  /** A user's cancel: PARTIAL, with the reason kept in the report. */
  cancel(reason: string): Promise<RunView>;
}
