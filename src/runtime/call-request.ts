import { AsyncLocalStorage } from 'node:async_hooks';
import {
  CALL_FIELDS,
  type Command,
  fieldsProblem,
  type Hashing,
  IllegalStateError,
  inputError,
  KEY_WITHOUT_SIDE_EFFECT,
  type LoopguardError,
  nameProblem,
  resultJsonOf,
  UnavailableError,
} from '../domain/index.js';
import type { CommandInput } from '../machines/index.js';

/** A tool call as `run.call` takes it. */
export type CallRequest = Pick<
  Extract<Command, { type: 'RequestToolCall' }>,
  'tool' | 'args' | 'operationKey' | 'sideEffect' | 'costEstimateUsd' | 'progressVersion' | 'afterUserTurn'
>;

export interface CallHooks {
  /** Asks the provider whether an in-doubt operation happened (and with what result). */
  readonly reconcile?: (operationKey: string) => Promise<{ happened: boolean; result?: unknown }>;
}

/** The request's problem, named by its argument path, before anything is claimed or recorded. */
export function requestProblem(req: CallRequest): LoopguardError | null {
  if (typeof req !== 'object' || req === null) return inputError('invalid_call', 'req', 'expected an object');
  const tool = nameProblem(req.tool);
  if (tool !== null) return inputError('invalid_call', 'req.tool', tool);
  const bad = fieldsProblem(req, CALL_FIELDS, 'req');
  if (bad !== null) return inputError('invalid_call', bad.path, bad.problem);
  if (req.sideEffect === false && req.operationKey !== undefined)
    return inputError('invalid_call', 'req.sideEffect', KEY_WITHOUT_SIDE_EFFECT);
  return null;
}

/** The first argument that is not a name, by its path. */
export function namesProblem(args: readonly (readonly [string, unknown])[]): LoopguardError | null {
  for (const [path, v] of args) {
    const bad = nameProblem(v);
    if (bad !== null) return inputError('invalid_input', path, bad);
  }
  return null;
}

/**
 * The runs whose tool is running in this async context. A tool that calls `run.call` of its own
 * run would wait for itself (calls of a run go one at a time): that call is refused at once.
 */
const runningTools = new AsyncLocalStorage<ReadonlySet<object>>();

/** Whether this code runs inside a tool of `run`. */
export const insideOwnTool = (run: object): boolean => runningTools.getStore()?.has(run) ?? false;

/** Runs `work` (a tool of `run`) so that what it calls knows it is inside that run's tool. */
export function runningTool<T>(run: object, work: () => Promise<T>): Promise<T> {
  return runningTools.run(new Set(runningTools.getStore() ?? []).add(run), work);
}

/** A result as it is recorded (canonical, secrets redacted), or the error naming what cannot be. */
export function recordedResult(value: unknown, hashing: Hashing): string {
  const r = resultJsonOf(value, hashing);
  if (!r.ok) throw r.error;
  return r.value.json;
}

export const reentrantCall = (runId: string): LoopguardError =>
  new IllegalStateError(
    'reentrant_call',
    `run ${runId}: run.call from inside a tool of the same run would wait for itself; call the inner tool directly, or give it a run of its own`,
  );

/**
 * The log did not take a command's events. After a tool ran, "nothing was executed" would be
 * false: the message says what is true instead.
 */
export function logRefused(cmd: CommandInput, e: unknown): LoopguardError {
  const ran = cmd.type === 'CompleteToolCall';
  const what = ran
    ? `the tool ran but its result was not recorded; resume the run (guard.resume) to settle call ${cmd.callId}`
    : 'nothing was executed';
  return new UnavailableError(
    'log_unavailable',
    `the event log did not accept the ${ran ? 'result' : 'decision'}; ${what} (${(e as Error).message})`,
    { cause: e },
  );
}
