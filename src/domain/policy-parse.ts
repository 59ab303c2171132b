import { err, LoopguardError, ok, type Result } from './errors.js';
import { MAX_COST_USD, MAX_LONG, MAX_TIMER_MS, own, put } from './input-check.js';
import {
  BUILTIN_TASK_TYPES,
  DEFAULT_LIMITS,
  DEFAULT_TOOL,
  type Limits,
  LOOP_RULES,
  type LoopRule,
  type Policy,
  type RuleAction,
  type ToolPolicy,
} from './policy.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

const NULLABLE_COUNTS = [
  'maxSteps',
  'maxWallClockMs',
  'stepTimeoutMs',
  'maxTokens',
  'maxToolCalls',
  'maxConsecutiveSameTool',
] as const;
const COUNTS = ['sameCallLimit', 'noProgressLimit', 'maxRetries', 'maxPolls'] as const;
const LIMIT_KEYS: ReadonlySet<string> = new Set([
  ...NULLABLE_COUNTS,
  ...COUNTS,
  'maxCostUsd',
  'nearDuplicate',
  'warnAt',
  'rules',
]);
const POLICY_KEYS: ReadonlySet<string> = new Set([
  ...LIMIT_KEYS,
  'tools',
  'taskTypes',
  '$schema',
  'description',
]);
const TOOL_KEYS: ReadonlySet<string> = new Set(['sideEffect', 'maxCalls', 'volatileArgs', 'costUsd']);
const ACTIONS: readonly RuleAction[] = ['stop', 'warn_first', 'warn_only', 'off'];

/** Collects every problem in one pass so a user fixes a policy file in one edit, not ten. */
class Issues {
  readonly list: string[] = [];
  add(path: string, problem: string): void {
    this.list.push(`${path}: ${problem}`);
  }
}

/** The largest value of a limit: a step timeout is one timer, money a double, every count a long. */
const maxOf = (path: string, integer: boolean): number =>
  path.endsWith('stepTimeoutMs') ? MAX_TIMER_MS : integer ? MAX_LONG : MAX_COST_USD;

function count(
  v: unknown,
  path: string,
  issues: Issues,
  nullable: boolean,
  integer = true,
): number | null | undefined {
  if (v === undefined) return undefined;
  if (v === null && nullable) return null;
  const max = maxOf(path, integer);
  if (typeof v !== 'number' || !Number.isFinite(v)) {
    issues.add(
      path,
      `expected ${integer ? 'an integer' : 'a number'}${nullable ? ' or null' : ''}, got ${JSON.stringify(v)}`,
    );
  } else if (v < 0) issues.add(path, `must not be negative, got ${v}`);
  else if (integer && !Number.isInteger(v)) issues.add(path, `expected an integer, got ${v}`);
  else if (v > max) issues.add(path, `must be at most ${max}, got ${v}`);
  else return v;
  return undefined;
}

function fraction(v: unknown, path: string, issues: Issues): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !(v > 0 && v <= 1))
    issues.add(path, `expected a number in (0, 1], got ${JSON.stringify(v)}`);
  else return v;
  return undefined;
}

function unknownKeys(o: Obj, allowed: ReadonlySet<string>, path: string, issues: Issues): void {
  for (const k of Object.keys(o)) if (!allowed.has(k)) issues.add(path ? `${path}.${k}` : k, 'unknown key');
}

function parseLimits(o: Obj, path: string, issues: Issues): Partial<Limits> {
  const p = (k: string) => (path ? `${path}.${k}` : k);
  const out: Record<string, unknown> = {};
  const set = (k: string, v: unknown) => {
    if (v !== undefined) out[k] = v;
  };
  for (const k of NULLABLE_COUNTS) set(k, count(o[k], p(k), issues, true));
  for (const k of COUNTS) set(k, count(o[k], p(k), issues, false));
  set('maxCostUsd', count(o.maxCostUsd, p('maxCostUsd'), issues, true, false));
  set('warnAt', fraction(o.warnAt, p('warnAt'), issues));
  if (o.nearDuplicate !== undefined) {
    if (!isObj(o.nearDuplicate)) issues.add(p('nearDuplicate'), 'expected an object { threshold, limit }');
    else {
      const nd = o.nearDuplicate;
      unknownKeys(nd, new Set(['threshold', 'limit']), p('nearDuplicate'), issues);
      const threshold = fraction(nd.threshold, p('nearDuplicate.threshold'), issues);
      const limit = count(nd.limit, p('nearDuplicate.limit'), issues, false);
      // A task type keeps only what it sets, so resolvePolicy merges it over the top level, not over the defaults.
      const base = path === '' ? DEFAULT_LIMITS.nearDuplicate : {};
      out.nearDuplicate = {
        ...base,
        ...(threshold === undefined ? {} : { threshold }),
        ...(limit === undefined ? {} : { limit }),
      };
    }
  }
  if (o.rules !== undefined) {
    if (!isObj(o.rules))
      issues.add(p('rules'), `expected an object mapping ${LOOP_RULES.join('|')} to an action`);
    else {
      const rules: Partial<Record<LoopRule, RuleAction>> = {};
      for (const [k, v] of Object.entries(o.rules)) {
        if (!(LOOP_RULES as readonly string[]).includes(k)) issues.add(p(`rules.${k}`), 'unknown rule');
        else if (!ACTIONS.includes(v as RuleAction))
          issues.add(p(`rules.${k}`), `expected one of ${ACTIONS.join(', ')}, got ${JSON.stringify(v)}`);
        else rules[k as LoopRule] = v as RuleAction;
      }
      out.rules = rules;
    }
  }
  return out as Partial<Limits>;
}

function parseTool(o: unknown, path: string, issues: Issues): ToolPolicy {
  if (!isObj(o)) {
    issues.add(path, 'expected an object { sideEffect, maxCalls, volatileArgs, costUsd }');
    return DEFAULT_TOOL;
  }
  unknownKeys(o, TOOL_KEYS, path, issues);
  let sideEffect = DEFAULT_TOOL.sideEffect;
  if (o.sideEffect !== undefined) {
    if (typeof o.sideEffect !== 'boolean')
      issues.add(`${path}.sideEffect`, `expected a boolean, got ${JSON.stringify(o.sideEffect)}`);
    else sideEffect = o.sideEffect;
  }
  let volatileArgs: string[] = [];
  if (o.volatileArgs !== undefined) {
    if (!Array.isArray(o.volatileArgs) || !o.volatileArgs.every((a) => typeof a === 'string'))
      issues.add(`${path}.volatileArgs`, 'expected an array of argument names');
    else volatileArgs = o.volatileArgs as string[];
  }
  return {
    sideEffect,
    volatileArgs,
    maxCalls: count(o.maxCalls, `${path}.maxCalls`, issues, true) ?? null,
    costUsd: count(o.costUsd, `${path}.costUsd`, issues, true, false) ?? null,
  };
}

/** Validates a policy read from JSON; every problem names its field path. */
export function parsePolicy(input: unknown): Result<Policy> {
  const issues = new Issues();
  if (!isObj(input)) return err(new LoopguardError('invalid_policy', 'policy: expected a JSON object'));
  unknownKeys(input, POLICY_KEYS, '', issues);
  const limits = parseLimits(input, '', issues);
  // A tool or task type named "__proto__" or "constructor" is data like any other (put, own).
  const tools: Record<string, ToolPolicy> = {};
  if (input.tools !== undefined) {
    if (!isObj(input.tools)) issues.add('tools', 'expected an object mapping tool names to settings');
    else
      for (const [name, t] of Object.entries(input.tools))
        put(tools, name, parseTool(t, `tools.${name}`, issues));
  }
  const taskTypes: Record<string, Partial<Limits>> = { ...BUILTIN_TASK_TYPES };
  if (input.taskTypes !== undefined) {
    if (!isObj(input.taskTypes)) issues.add('taskTypes', 'expected an object mapping task types to limits');
    else
      for (const [name, t] of Object.entries(input.taskTypes)) {
        if (!isObj(t)) issues.add(`taskTypes.${name}`, 'expected an object of limits');
        else {
          unknownKeys(t, LIMIT_KEYS, `taskTypes.${name}`, issues);
          put(taskTypes, name, { ...own(taskTypes, name), ...parseLimits(t, `taskTypes.${name}`, issues) });
        }
      }
  }
  if (issues.list.length > 0) {
    return err(
      new LoopguardError('invalid_policy', `invalid policy: ${issues.list.join('; ')}`, {
        details: { issues: issues.list },
      }),
    );
  }
  const policy: Policy = {
    ...DEFAULT_LIMITS,
    ...limits,
    rules: { ...DEFAULT_LIMITS.rules, ...limits.rules },
    tools,
    taskTypes,
  };
  return ok(policy);
}
