import type { ChildState, TreeSpend } from './family.js';
import type { RunPolicy } from './policy.js';

export const RESULT_KINDS = ['SUCCESS', 'RETRYABLE', 'PRECONDITION', 'FATAL', 'PENDING'] as const;
export type ResultKind = (typeof RESULT_KINDS)[number];

export type LiveState = 'RUNNING' | 'WAITING';
export const TERMINAL_STATES = [
  'COMPLETED',
  'STOPPED_LOOP_GUARD',
  'NEEDS_HUMAN',
  'FAILED',
  'PARTIAL',
] as const;
export type TerminalState = (typeof TERMINAL_STATES)[number];
export type RunStatus = 'NEW' | LiveState | TerminalState;
export const isTerminal = (s: RunStatus): s is TerminalState =>
  (TERMINAL_STATES as readonly string[]).includes(s);

/**
 * Before a call: execute | return_cached_success | refuse | stop_partial | wait.
 * After a call: continue | complete | retry_after_backoff | wait_bounded | needs_changed_precondition | stop.
 * Only `execute` lets a tool run; an execute may carry a warning for the model.
 */
export type Decision =
  | 'execute'
  | 'return_cached_success'
  | 'refuse'
  | 'stop_partial'
  | 'wait'
  | 'continue'
  | 'complete'
  | 'retry_after_backoff'
  | 'wait_bounded'
  | 'needs_changed_precondition'
  | 'stop';

/** What a decision rests on: the fingerprints, counts and thresholds involved. */
export interface Evidence {
  readonly fingerprints: readonly string[];
  readonly counts: Readonly<Record<string, number>>;
  readonly thresholds: Readonly<Record<string, number>>;
}

export interface Spend extends TreeSpend {
  readonly elapsedMs: number;
}

export interface StopReport {
  readonly terminalState: TerminalState;
  readonly guardReason: string;
  readonly message: string;
  readonly completed: readonly string[];
  readonly completedOperations: readonly string[];
  readonly inDoubtOperations: readonly string[];
  readonly gaps: readonly string[];
  readonly lastSafeCheckpoint: string | null;
  readonly unmetPrecondition: string | null;
  readonly resumeCondition: string;
  readonly nextAllowedAction: string;
  readonly evidence: Evidence;
  readonly spend: Spend;
  /** The run's sub-agents and the state each was in when it ended. */
  readonly children: readonly ChildState[];
}

export type DomainEvent =
  | {
      readonly type: 'RunStarted';
      readonly runId: string;
      readonly taskType: string | null;
      readonly tenant: string | null;
      readonly policy: RunPolicy;
      readonly progressVersion: number;
      /** Labels the caller attaches to the run; not read by the guard. */
      readonly meta: Readonly<Record<string, string>>;
      /** The supervisor run this one is a sub-agent of, or null. */
      readonly parentRunId: string | null;
    }
  | {
      readonly type: 'ToolCallRequested';
      readonly callId: string;
      readonly tool: string;
      readonly argsJson: string;
      readonly fingerprint: string;
      readonly operationKey: string | null;
      readonly sideEffect: boolean;
      readonly costEstimateUsd: number | null;
      readonly afterUserTurn: boolean;
      readonly progressVersion: number | null;
      /** Canonical args of the earlier call of this tool that these resemble (a near-duplicate), if any. */
      readonly similarTo: string | null;
      readonly similarity: number | null;
      /** `intentOf(argsJson)` as the decider computed it, for the fold; absent in older records. */
      readonly intent?: string;
    }
  | {
      readonly type: 'GuardDecided';
      readonly callId: string | null;
      readonly phase: 'before' | 'after';
      readonly decision: Decision;
      readonly rule: string | null;
      readonly message: string;
      readonly evidence: Evidence;
      readonly waitUntilMs: number | null;
      readonly warning: string | null;
      /** For return_cached_success: the recorded result handed back instead of running the tool. */
      readonly resultJson: string | null;
    }
  | {
      readonly type: 'ToolCallCompleted';
      readonly callId: string;
      readonly kind: ResultKind;
      readonly code: string | null;
      readonly resultHash: string;
      readonly terminal: boolean;
      readonly progressVersion: number | null;
      readonly tokens: number;
      readonly costUsd: number;
      readonly retryAfterMs: number | null;
      readonly durationMs: number;
      /** False for an answer that says nothing ("", "ok", {}, a harness's wrapped empty output). */
      readonly informative: boolean;
      /**
       * False for a short answer that shares no word with the call's arguments ("File written
       * successfully." to a write of a script): about the harness, not the ask.
       */
      readonly answersAsk: boolean;
      /**
       * The class the guard judges the result by: a digest of the result with its volatile parts
       * masked (normalised-result.ts), or null when masking changed nothing and `resultHash`, the
       * raw result's hash, is the class.
       */
      readonly resultClass: string | null;
      /** The result reports a failure (see failed-result.ts); old records read false. */
      readonly failed: boolean;
    }
  | {
      readonly type: 'ModelUsageRecorded';
      readonly tokensIn: number;
      readonly tokensOut: number;
      readonly costUsd: number;
    }
  | {
      readonly type: 'BudgetWarning';
      readonly budget: string;
      readonly used: number;
      readonly limit: number;
      readonly message: string;
    }
  | {
      readonly type: 'RunWaiting';
      readonly reason: string;
      readonly untilMs: number;
      readonly callId: string | null;
    }
  | { readonly type: 'RunStopped'; readonly report: StopReport }
  | {
      readonly type: 'RunResumed';
      readonly preconditionChange: string;
      readonly approvedBy: string | null;
      readonly fromCheckpoint: string | null;
      readonly progressVersion: number;
      readonly policy: RunPolicy | null;
    }
  | {
      readonly type: 'CheckpointRecorded';
      readonly checkpointId: string;
      readonly progressVersion: number;
      readonly completedOperations: readonly string[];
    }
  | { readonly type: 'OperationClaimed'; readonly operationKey: string; readonly callId: string }
  | {
      readonly type: 'OperationCompleted';
      readonly operationKey: string;
      readonly callId: string;
      readonly resultJson: string;
    }
  | {
      readonly type: 'OperationInDoubt';
      readonly operationKey: string;
      readonly callId: string;
      readonly reason: string;
    }
  /** A claim given up because the side effect certainly did not happen (refused, or failed before acting). */
  | {
      readonly type: 'OperationReleased';
      readonly operationKey: string;
      readonly callId: string;
      readonly reason: string;
    }
  /**
   * Not a run's event: many runs hit one loop signature within a window. Its stream is the
   * signature (the envelope's run id is `fleet:<signature>`), and it is published on the stops topic.
   */
  | {
      readonly type: 'FleetLoopDetected';
      readonly signature: string;
      readonly tool: string;
      readonly rule: string;
      readonly intent: string;
      readonly runIds: readonly string[];
      readonly tenants: readonly string[];
      readonly threshold: number;
      readonly windowMs: number;
      readonly firstAtMs: number;
      readonly lastAtMs: number;
    };

export type EventType = DomainEvent['type'];
export type EventOf<T extends EventType> = Extract<DomainEvent, { type: T }>;

/** A domain event as the log holds it: the envelope adds identity, order and time. */
export interface RecordedEvent<E extends DomainEvent = DomainEvent> {
  readonly eventId: string;
  readonly runId: string;
  readonly seq: number;
  readonly atMs: number;
  readonly event: E;
}

export const emptyEvidence: Evidence = { fingerprints: [], counts: {}, thresholds: {} };
