import {
  failedResult,
  fieldsProblem,
  type Hashing,
  inputError,
  type LoopguardError,
  nameProblem,
  OUTCOME_FIELDS,
  oneOfProblem,
  RESULT_KINDS,
  type ResultKind,
  type ToolResult,
  toolResult,
} from '../domain/index.js';
import { isToolOutcome, ToolError, ToolNotStarted } from './tool-outcome.js';

export type ToolFn = (signal: AbortSignal) => Promise<unknown> | unknown;

export interface Executed extends ToolResult {
  readonly kind: ResultKind;
  readonly code: string | null;
  readonly value: unknown;
  readonly terminal: boolean;
  readonly retryAfterMs: number | null;
  readonly progressVersion: number | null;
  readonly tokens: number;
  /** What the tool reported it cost; null when it did not say (the guard then charges its estimate). */
  readonly costUsd: number | null;
  /** Nobody knows whether a side effect happened: timed out, or failed without saying how. */
  readonly inDoubt: boolean;
  /** The tool's own promise, when it was still running at its step timeout (late-effects.ts). */
  readonly late?: Promise<unknown>;
}

class Timeout extends Error {}

/** What `p` rejected with if it settles before the next turn of the event loop, else undefined. */
const settledWithin = (p: Promise<unknown>): Promise<unknown> =>
  Promise.race([
    p.then(
      () => undefined,
      (e: unknown) => e,
    ),
    new Promise<undefined>((resolve) => setImmediate(() => resolve(undefined))),
  ]);

/** What a ToolError may say: a failure (a thrown SUCCESS from JS would complete a key on an error). */
const FAILURE_KINDS: readonly ResultKind[] = ['RETRYABLE', 'PRECONDITION', 'FATAL'];

/** The kind's problem as a path and text, or null: the types do not hold for a JS caller. */
function kindProblem(
  kind: unknown,
  kinds: readonly string[],
  prefix: string,
): { readonly path: string; readonly problem: string } | null {
  const problem = oneOfProblem(kinds)(kind);
  return problem === null ? null : { path: `${prefix}.kind`, problem };
}

/**
 * Runs a tool with an AbortSignal that fires at `timeoutMs`, and classifies what came back. A
 * side-effecting tool that times out or throws an unclassified error is in doubt, never simply
 * retryable: it may have done its work before failing to answer.
 */
export async function executeTool(
  fn: ToolFn,
  timeoutMs: number | null,
  sideEffect: boolean,
  hashing: Hashing,
): Promise<Executed> {
  const ctl = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const base = {
    terminal: false,
    retryAfterMs: null,
    progressVersion: null,
    tokens: 0,
    costUsd: null,
    inDoubt: false,
  };
  const failed = (
    kind: ResultKind,
    code: string,
    inDoubt: boolean,
    retryAfterMs: number | null = null,
  ): Executed => ({
    ...base,
    ...failedResult(kind, code, hashing),
    kind,
    code,
    value: null,
    inDoubt,
    retryAfterMs,
  });
  /**
   * The tool answered with something that cannot be recorded (a circular value, tokens of 1.5):
   * FATAL, and a side effect is in doubt (it may well have happened), never run again blindly.
   */
  const unrecordable = (e: LoopguardError): Executed => {
    const value = { error: 'invalid_result', problem: e.message };
    const recorded = toolResult('FATAL', 'invalid_result', value, hashing);
    return {
      ...(recorded.ok ? recorded.value : failedResult('FATAL', 'invalid_result', hashing)),
      ...base,
      kind: 'FATAL',
      code: 'invalid_result',
      value,
      inDoubt: sideEffect,
    };
  };
  const running = Promise.resolve().then(() => fn(ctl.signal));
  try {
    const timeout = new Promise<never>((_, reject) => {
      if (timeoutMs !== null) timer = setTimeout(() => reject(new Timeout()), timeoutMs);
    });
    const raw = await Promise.race([running, timeout]);
    if (isToolOutcome(raw)) {
      const bad =
        kindProblem(raw.kind, RESULT_KINDS, 'result') ?? fieldsProblem(raw, OUTCOME_FIELDS, 'result');
      if (bad !== null) return unrecordable(inputError('invalid_result', bad.path, bad.problem));
      const recorded = toolResult(raw.kind, raw.code ?? null, raw.value, hashing);
      if (!recorded.ok) return unrecordable(recorded.error);
      return {
        ...recorded.value,
        kind: raw.kind,
        code: raw.code ?? null,
        value: raw.value,
        terminal: raw.terminal ?? false,
        retryAfterMs: raw.retryAfterMs ?? null,
        progressVersion: raw.progressVersion ?? null,
        tokens: raw.tokens ?? 0,
        costUsd: raw.costUsd ?? null,
        inDoubt: false,
      };
    }
    const recorded = toolResult('SUCCESS', null, raw, hashing);
    if (!recorded.ok) return unrecordable(recorded.error);
    return { ...base, ...recorded.value, kind: 'SUCCESS', code: null, value: raw };
  } catch (e) {
    if (e instanceof Timeout) {
      ctl.abort(new Error(`step timeout after ${timeoutMs} ms`));
      // A tool function that answers the abort within a turn saying its tool never started did
      // nothing: not run, free to ask again, never in doubt. Any other answer may follow work done.
      if ((await settledWithin(running)) instanceof ToolNotStarted)
        return failed('RETRYABLE', 'not_run', false, 0);
      return { ...failed('RETRYABLE', 'timeout', sideEffect), late: running };
    }
    if (e instanceof ToolError) {
      const bad = kindProblem(e.kind, FAILURE_KINDS, 'error') ?? fieldsProblem(e, OUTCOME_FIELDS, 'error');
      if (bad !== null) return unrecordable(inputError('invalid_result', bad.path, bad.problem));
      return failed(e.kind, e.code, false, e.retryAfterMs ?? null);
    }
    const name = e instanceof Error ? e.name : '';
    return failed('RETRYABLE', nameProblem(name) === null ? name : 'error', sideEffect);
  } finally {
    clearTimeout(timer);
  }
}
