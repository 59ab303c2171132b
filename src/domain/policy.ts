import { own } from './input-check.js';

/**
 * The guard's policy: plain JSON, the public file format of `--policy file.json`.
 * A `null` limit means "no limit"; an omitted one takes the default.
 */
export type RuleAction = 'stop' | 'warn_first' | 'warn_only' | 'off';

/** The loop rules whose action a policy may change (budgets always stop). */
export const LOOP_RULES = ['exact_repeat', 'short_cycle', 'near_duplicate', 'no_progress'] as const;
export type LoopRule = (typeof LOOP_RULES)[number];

export interface ToolPolicy {
  readonly sideEffect: boolean;
  readonly maxCalls: number | null;
  readonly volatileArgs: readonly string[];
  readonly costUsd: number | null;
}

export interface NearDuplicatePolicy {
  /** Similarity in [0, 1] at or above which two argument sets of one tool count as the same ask. */
  readonly threshold: number;
  /**
   * Near-duplicates in a row that got the very answer of the ask they resemble (an informative
   * answer: "ok" proves nothing); the next near-duplicate is refused. A different answer or news
   * from outside starts the count over.
   */
  readonly limit: number;
}

export interface Limits {
  readonly maxSteps: number | null;
  readonly maxWallClockMs: number | null;
  readonly stepTimeoutMs: number | null;
  readonly maxTokens: number | null;
  readonly maxCostUsd: number | null;
  readonly maxToolCalls: number | null;
  readonly maxConsecutiveSameTool: number | null;
  readonly sameCallLimit: number;
  readonly noProgressLimit: number;
  readonly maxRetries: number;
  readonly maxPolls: number;
  readonly nearDuplicate: NearDuplicatePolicy;
  readonly warnAt: number;
  readonly rules: Readonly<Record<LoopRule, RuleAction>>;
}

export interface Policy extends Limits {
  readonly tools: Readonly<Record<string, ToolPolicy>>;
  readonly taskTypes: Readonly<Record<string, Partial<Limits>>>;
}

/** A policy resolved for one run: task-type overrides applied. */
export type RunPolicy = Omit<Policy, 'taskTypes'>;

/**
 * Defaults, chosen on recorded agent runs (see the evaluation in the README) and with long runs in
 * mind: coding agents make 30 to 150 calls and re-run one test command after every edit, so the
 * step budget is a fuse far above that, and every loop rule needs evidence of no new information
 * (an identical result for an identical call), not mere similarity of calls.
 */
export const DEFAULT_LIMITS: Limits = {
  maxSteps: 200,
  maxWallClockMs: 60 * 60 * 1000,
  stepTimeoutMs: 120_000,
  maxTokens: null,
  maxCostUsd: null,
  maxToolCalls: 400,
  maxConsecutiveSameTool: null,
  sameCallLimit: 2,
  noProgressLimit: 3,
  maxRetries: 3,
  maxPolls: 20,
  nearDuplicate: { threshold: 0.85, limit: 2 },
  warnAt: 0.8,
  rules: { exact_repeat: 'stop', short_cycle: 'stop', near_duplicate: 'stop', no_progress: 'stop' },
};

/** Built-in task profiles (step budgets by kind of task); a policy's `taskTypes` may override them. */
export const BUILTIN_TASK_TYPES: Readonly<Record<string, Partial<Limits>>> = {
  single_query: { maxSteps: 3 },
  multi_step: { maxSteps: 8 },
  research: { maxSteps: 20 },
};

export const DEFAULT_TOOL: ToolPolicy = {
  sideEffect: false,
  maxCalls: null,
  volatileArgs: [],
  costUsd: null,
};

export const DEFAULT_POLICY: Policy = { ...DEFAULT_LIMITS, tools: {}, taskTypes: BUILTIN_TASK_TYPES };

export function resolvePolicy(policy: Policy, taskType?: string): RunPolicy {
  const { taskTypes, ...base } = policy;
  const override = taskType === undefined ? undefined : own(taskTypes, taskType);
  if (override === undefined) return base;
  return {
    ...base,
    ...override,
    nearDuplicate: { ...base.nearDuplicate, ...override.nearDuplicate },
    rules: { ...base.rules, ...override.rules },
  };
}

export function toolPolicy(policy: RunPolicy, tool: string): ToolPolicy {
  return own(policy.tools, tool) ?? DEFAULT_TOOL;
}

/**
 * Whether a call is a side effect, gated by the ledger. An operation key names a business
 * operation, so it declares one: a caller who passes a key and forgets `sideEffect` must not get
 * a payment run twice. An explicit `sideEffect: false` beside a key is refused by the decider.
 */
export function callIsSideEffect(
  policy: RunPolicy,
  tool: string,
  declared: boolean | undefined | null,
  operationKey: string | undefined | null,
): boolean {
  if (declared !== undefined && declared !== null) return declared;
  return (operationKey !== undefined && operationKey !== null) || toolPolicy(policy, tool).sideEffect;
}

/** The problem with a call that names an operation key yet says it has no side effect. */
export const KEY_WITHOUT_SIDE_EFFECT =
  'sideEffect: false contradicts operationKey: an operation key declares a side effect (drop sideEffect, or drop the key for a call that changes nothing)';
