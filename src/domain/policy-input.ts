import type { Limits, NearDuplicatePolicy, Policy, RuleAction, ToolPolicy } from './policy.js';

/** Limits as a policy file writes them: any of them, each nested object partly. */
type LimitsInput = Partial<Omit<Limits, 'nearDuplicate' | 'rules'>> & {
  readonly nearDuplicate?: Partial<NearDuplicatePolicy>;
  readonly rules?: Partial<Limits['rules']> & Readonly<Record<never, RuleAction>>;
};

/**
 * A policy as a policy file (`--policy file.json`) writes it, typed: every field optional, an
 * omitted one takes its default. A misspelt field in an object literal of this type does not
 * compile; a policy read from JSON at run time is checked by `parsePolicy` instead.
 */
export type PolicyInput = LimitsInput & {
  readonly tools?: Readonly<Record<string, Partial<ToolPolicy>>>;
  readonly taskTypes?: Readonly<Record<string, LimitsInput>>;
};

/** What `createGuard({ policy })` takes: a typed policy or a parsed one (JSON.parse's `any` fits; it is validated either way). */
export type PolicyOption = PolicyInput | Policy;
