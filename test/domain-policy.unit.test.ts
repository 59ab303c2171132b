import { describe, expect, it } from 'vitest';
import { DEFAULT_POLICY, parsePolicy, resolvePolicy } from '../src/domain/index.js';

const issuesOf = (input: unknown): string[] => {
  const r = parsePolicy(input);
  if (r.ok) throw new Error('expected the policy to be rejected');
  expect(r.error.code).toBe('invalid_policy');
  return r.error.details.issues as string[];
};

describe('parsePolicy', () => {
  it('rejects an unknown top-level key, naming it', () => {
    const issues = issuesOf({ maxStep: 10 });
    expect(issues).toEqual(['maxStep: unknown key']);
  });

  it('rejects an unknown key inside a tool, with the full field path', () => {
    expect(issuesOf({ tools: { pay: { sideEfect: true } } })).toEqual(['tools.pay.sideEfect: unknown key']);
  });

  it('rejects a wrong type, naming the field path', () => {
    const r = parsePolicy({ maxSteps: '10', tools: { pay: { sideEffect: 'yes' } } });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.message).toContain('maxSteps: expected an integer or null');
    expect(r.error.message).toContain('tools.pay.sideEffect: expected a boolean');
    expect(r.error.details.issues).toHaveLength(2);
  });

  it('rejects a negative limit, naming tools.pay.maxCalls', () => {
    const r = parsePolicy({ tools: { pay: { maxCalls: -1 } } });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.message).toContain('tools.pay.maxCalls: must not be negative, got -1');
  });

  it('rejects a negative top-level count and a non-fraction warnAt', () => {
    const issues = issuesOf({ sameCallLimit: -2, warnAt: 1.5, maxCostUsd: -0.5 });
    expect(issues).toContain('sameCallLimit: must not be negative, got -2');
    expect(issues).toContain('maxCostUsd: must not be negative, got -0.5');
    expect(issues.some((i) => i.startsWith('warnAt: expected a number in (0, 1]'))).toBe(true);
  });

  it('names paths inside task types and rule actions', () => {
    const issues = issuesOf({
      taskTypes: { research: { maxSteps: -1, bogus: 1 } },
      rules: { exact_repeat: 'explode', made_up: 'stop' },
    });
    expect(issues).toContain('taskTypes.research.maxSteps: must not be negative, got -1');
    expect(issues).toContain('taskTypes.research.bogus: unknown key');
    expect(issues.some((i) => i.startsWith('rules.exact_repeat: expected one of'))).toBe(true);
    expect(issues).toContain('rules.made_up: unknown rule');
  });

  it('accepts a valid policy file and fills defaults', () => {
    const r = parsePolicy({
      $schema: 'https://example.invalid/loopguard.json',
      description: 'shop agent',
      maxSteps: 50,
      maxCostUsd: 2.5,
      maxTokens: null,
      sameCallLimit: 3,
      nearDuplicate: { threshold: 0.9, limit: 2 },
      rules: { short_cycle: 'warn_first' },
      tools: {
        pay: { sideEffect: true, maxCalls: 1, costUsd: 0.1 },
        search: { volatileArgs: ['session'] },
      },
      taskTypes: { triage: { maxSteps: 5 } },
    });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const p = r.value;
    expect(p.maxSteps).toBe(50);
    expect(p.maxCostUsd).toBe(2.5);
    expect(p.maxTokens).toBeNull();
    expect(p.sameCallLimit).toBe(3);
    expect(p.noProgressLimit).toBe(DEFAULT_POLICY.noProgressLimit);
    expect(p.warnAt).toBe(0.8);
    expect(p.nearDuplicate).toEqual({ threshold: 0.9, limit: 2 });
    expect(p.rules).toEqual({
      exact_repeat: 'stop',
      short_cycle: 'warn_first',
      near_duplicate: 'stop',
      no_progress: 'stop',
    });
    expect(p.tools.pay).toEqual({ sideEffect: true, maxCalls: 1, costUsd: 0.1, volatileArgs: [] });
    expect(p.tools.search).toEqual({
      sideEffect: false,
      maxCalls: null,
      costUsd: null,
      volatileArgs: ['session'],
    });
    expect(p.taskTypes.triage).toEqual({ maxSteps: 5 });
    expect(p.taskTypes.single_query).toEqual({ maxSteps: 3 });
  });

  it('rejects a non-object policy', () => {
    const r = parsePolicy([1, 2]);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.code).toBe('invalid_policy');
  });
});

describe('resolvePolicy', () => {
  it('applies the built-in task types: single_query 3, multi_step 8, research 20 steps', () => {
    expect(resolvePolicy(DEFAULT_POLICY, 'single_query').maxSteps).toBe(3);
    expect(resolvePolicy(DEFAULT_POLICY, 'multi_step').maxSteps).toBe(8);
    expect(resolvePolicy(DEFAULT_POLICY, 'research').maxSteps).toBe(20);
    expect(resolvePolicy(DEFAULT_POLICY).maxSteps).toBe(200);
    expect(resolvePolicy(DEFAULT_POLICY, 'no_such_type').maxSteps).toBe(200);
  });

  it('has warnAt 0.8 by default and drops taskTypes from the run policy', () => {
    const p = resolvePolicy(DEFAULT_POLICY, 'research');
    expect(p.warnAt).toBe(0.8);
    expect('taskTypes' in p).toBe(false);
  });

  it('a parsed task type overrides only what it names, keeping the top-level rules', () => {
    const r = parsePolicy({
      maxCostUsd: 1,
      rules: { exact_repeat: 'warn_first' },
      taskTypes: { single_query: { maxSteps: 5, rules: { short_cycle: 'off' } } },
    });
    if (!r.ok) throw r.error;
    const p = resolvePolicy(r.value, 'single_query');
    expect(p.maxSteps).toBe(5);
    expect(p.maxCostUsd).toBe(1);
    expect(p.rules.exact_repeat).toBe('warn_first');
    expect(p.rules.short_cycle).toBe('off');
  });

  it('a task type that sets only nearDuplicate.limit keeps the top-level threshold', () => {
    const r = parsePolicy({
      nearDuplicate: { threshold: 0.95 },
      taskTypes: { research: { nearDuplicate: { limit: 2 } } },
    });
    if (!r.ok) throw r.error;
    const p = resolvePolicy(r.value, 'research');
    expect(p.nearDuplicate.limit).toBe(2);
    expect(p.nearDuplicate.threshold).toBe(0.95);
  });
});
