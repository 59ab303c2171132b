import type { ResultJudgement } from '../domain/commands.js';
import type { ResultKind } from '../domain/events.js';

/**
 * One recorded agent run, in the JSONL format of ../shared/traces/README.md, plus the optional
 * per-call fields loopguard understands (result class, progress version, side effects, spend).
 */

export interface TraceCall {
  readonly step: number;
  readonly tool: string;
  readonly args: Readonly<Record<string, unknown>>;
  readonly result: string;
  readonly result_sha256: string;
  readonly result_len?: number;
  readonly after_user_turn: boolean;
  readonly kind?: ResultKind;
  readonly code?: string;
  readonly progress_version?: number;
  readonly operation_key?: string;
  readonly side_effect?: boolean;
  readonly retry_after_ms?: number;
  readonly cost_usd?: number;
  readonly tokens?: number;
  readonly at_ms?: number;
  /**
   * How the guard judged the result when it was recorded, for a run read back from the log (which
   * keeps a result's hash, not its text); not part of the trace file format.
   */
  readonly judgement?: ResultJudgement;
}

interface TraceOutcome {
  readonly success: boolean | null;
  readonly detail?: string;
}

export interface TraceRun {
  readonly run_id: string;
  /** The line of the file it was read from, for messages about it. */
  readonly line?: number;
  readonly source?: string;
  /** Selects the policy's `taskTypes` profile, as `startRun({ taskType })` does. */
  readonly task_type?: string;
  /** The supervisor run this run was a sub-agent of, recorded in the same files. */
  readonly parent_run_id?: string;
  readonly outcome: TraceOutcome;
  readonly calls: readonly TraceCall[];
}
