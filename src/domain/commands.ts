import type { ResultKind, TerminalState } from './events.js';
import type { ChildState, FamilyView } from './family.js';
import type { RunPolicy } from './policy.js';

/** What the ledger (shared across workers) says about an operation key, looked up by the runtime. */
export type LedgerView =
  | { readonly status: 'none' }
  | { readonly status: 'claimed'; readonly byRun: string }
  | { readonly status: 'completed'; readonly resultJson: string }
  | { readonly status: 'in_doubt' };

/** How the guard judged a result when it was recorded. */
export interface ResultJudgement {
  readonly informative: boolean;
  readonly answersAsk: boolean;
  /** The recorded result class (see ToolCallCompleted.resultClass); absent on older records. */
  readonly resultClass?: string | null;
  readonly failed?: boolean;
}

/** What every command that ends the run carries besides its own fields. */
interface Ending {
  /** The run's sub-agents and the state each was in (the stop report's children). */
  readonly children?: readonly ChildState[];
  readonly atMs: number;
}

export type Command =
  | {
      readonly type: 'StartRun';
      readonly runId: string;
      readonly policy: RunPolicy;
      readonly taskType?: string;
      readonly tenant?: string;
      readonly progressVersion?: number;
      readonly meta?: Readonly<Record<string, string>>;
      /** The supervisor run this one is a sub-agent of: its spend counts against every ancestor's budgets. */
      readonly parentRunId?: string;
      readonly atMs: number;
    }
  | {
      readonly type: 'RequestToolCall';
      readonly callId: string;
      readonly tool: string;
      readonly args: unknown;
      /** The business operation this call performs (tenant + order + action); required for side effects to be deduplicated. */
      readonly operationKey?: string;
      readonly sideEffect?: boolean;
      readonly costEstimateUsd?: number;
      readonly afterUserTurn?: boolean;
      readonly progressVersion?: number;
      readonly ledger?: LedgerView;
      /** The run's place in its tree of supervisors and sub-agents, when it has one. */
      readonly family?: FamilyView;
      readonly atMs: number;
    }
  | {
      readonly type: 'CompleteToolCall';
      readonly callId: string;
      readonly kind: ResultKind;
      readonly code?: string;
      readonly resultHash: string;
      /** The result as JSON, kept in the ledger for a side effect so a repeat returns it. */
      readonly resultJson?: string;
      /** The goal is reached by this call (a verifier's answer, not the model's). */
      readonly terminal?: boolean;
      readonly progressVersion?: number;
      readonly tokens?: number;
      readonly costUsd?: number;
      readonly retryAfterMs?: number;
      /** A side effect whose outcome is unknown (timed out, connection lost after sending). */
      readonly inDoubt?: boolean;
      /**
       * The judgement of the result recorded when it first came (a re-decision from the log, which
       * keeps results as hashes, not text); else judged from `resultJson`.
       */
      readonly judgement?: ResultJudgement;
      readonly family?: FamilyView;
      readonly atMs: number;
    }
  | {
      readonly type: 'RecordModelUsage';
      readonly tokensIn: number;
      readonly tokensOut: number;
      readonly costUsd: number;
      readonly atMs: number;
    }
  | (Ending & { readonly type: 'Finish'; readonly verified: boolean; readonly gaps?: readonly string[] })
  | (Ending & { readonly type: 'Cancel'; readonly reason: string })
  /** The caller's verdict that the goal cannot be met: FAILED, with the reason kept. */
  | (Ending & { readonly type: 'Fail'; readonly reason: string })
  /** An ancestor of this sub-agent ended: so does this run (PARTIAL), whatever it was doing. */
  | (Ending & {
      readonly type: 'EndWithParent';
      readonly parentRunId: string;
      readonly parentState: TerminalState;
    })
  | {
      readonly type: 'Resume';
      readonly preconditionChange: string;
      readonly approvedBy?: string;
      readonly policy?: RunPolicy;
      readonly atMs: number;
    }
  | { readonly type: 'RecordCheckpoint'; readonly checkpointId?: string; readonly atMs: number }
  /**
   * An in-doubt (or cut-off) operation of this run settled by reconcile or a person: it happened
   * (its result is kept) or it certainly did not (the key is free again).
   */
  | {
      readonly type: 'SettleOperation';
      readonly operationKey: string;
      readonly happened: boolean;
      readonly resultJson?: string;
      readonly settledBy: string;
      readonly atMs: number;
    };
