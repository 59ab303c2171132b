import { err, LoopguardError, ok, type Result } from '../domain/errors.js';
import { RESULT_KINDS } from '../domain/events.js';
import {
  booleanProblem,
  type Check,
  costProblem,
  delayProblem,
  type FieldSpec,
  fieldsProblem,
  MAX_JSON_CHARS,
  MAX_LONG,
  nameProblem,
  progressVersionProblem,
  textProblem,
  timeProblem,
  tokensProblem,
} from '../domain/input-check.js';
import type { TraceCall, TraceRun } from './trace-run.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

const resultProblem: Check = (v) =>
  typeof v !== 'string'
    ? 'expected a string'
    : v.length > MAX_JSON_CHARS
      ? `longer than ${MAX_JSON_CHARS} characters`
      : null;
const stepProblem: Check = (v) =>
  typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= MAX_LONG
    ? null
    : `expected an integer in [0, ${MAX_LONG}]`;
const kindProblem: Check = (v) =>
  (RESULT_KINDS as readonly unknown[]).includes(v) ? null : `expected one of ${RESULT_KINDS.join(', ')}`;
const sha256Problem: Check = (v) => (typeof v === 'string' && v !== '' ? null : 'missing or not a string');

/** The trace format's per-call fields, each checked as the library checks the same value. */
const CALL_SPEC: FieldSpec = {
  tool: nameProblem,
  step: stepProblem,
  result: resultProblem,
  result_sha256: sha256Problem,
  result_len: tokensProblem,
  after_user_turn: booleanProblem,
  side_effect: booleanProblem,
  kind: kindProblem,
  code: nameProblem,
  operation_key: nameProblem,
  progress_version: progressVersionProblem,
  retry_after_ms: delayProblem,
  cost_usd: costProblem,
  tokens: tokensProblem,
  at_ms: timeProblem,
};

/** Reads one JSONL line of a recorded run; an error names the line and the field. */
export function parseTraceLine(line: string, lineNo: number, file = 'input'): Result<TraceRun> {
  const bad = (field: string, problem: string) =>
    err(
      new LoopguardError('invalid_trace', `${file}:${lineNo}: ${field}: ${problem}`, {
        details: { file, line: lineNo, field },
      }),
    );
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch (e) {
    return bad('(line)', `malformed JSON (${(e as Error).message})`);
  }
  if (!isObj(raw)) return bad('(line)', 'expected a JSON object');
  const runId = nameProblem(raw.run_id);
  if (runId !== null) return bad('run_id', runId);
  // Checked as the library's startRun checks its tenant and taskType (names: bounded, well-formed Unicode).
  const named = fieldsProblem(raw, { source: nameProblem, task_type: nameProblem }, '');
  if (named !== null) return bad(named.path, named.problem);
  const outcome = raw.outcome ?? { success: null };
  if (
    !isObj(outcome) ||
    !(outcome.success === null || typeof outcome.success === 'boolean' || outcome.success === undefined)
  ) {
    return bad('outcome.success', 'expected true, false or null');
  }
  if (outcome.detail !== undefined && textProblem(outcome.detail) !== null)
    return bad('outcome.detail', textProblem(outcome.detail) ?? '');
  if (raw.parent_run_id !== undefined && nameProblem(raw.parent_run_id) !== null)
    return bad('parent_run_id', nameProblem(raw.parent_run_id) ?? '');
  if (raw.parent_run_id === raw.run_id) return bad('parent_run_id', 'a run cannot be its own parent');
  if (!Array.isArray(raw.calls)) return bad('calls', 'expected an array');
  const calls: TraceCall[] = [];
  for (const [i, c] of raw.calls.entries()) {
    const at = `calls[${i}]`;
    if (!isObj(c)) return bad(at, 'expected an object');
    if (c.tool === undefined) return bad(`${at}.tool`, 'missing');
    if (c.result_sha256 === undefined) return bad(`${at}.result_sha256`, 'missing or not a string');
    if (!isObj(c.args)) return bad(`${at}.args`, 'expected an object');
    const problem = fieldsProblem(c, CALL_SPEC, at);
    if (problem !== null) return bad(problem.path, problem.problem);
    calls.push({
      ...(c as unknown as TraceCall),
      step: (c.step as number | undefined) ?? i,
      result: (c.result as string | undefined) ?? '',
      after_user_turn: (c.after_user_turn as boolean | undefined) ?? i === 0,
    });
  }
  const success = (outcome.success as boolean | null | undefined) ?? null;
  return ok({
    run_id: raw.run_id as string,
    line: lineNo,
    ...(typeof raw.source === 'string' ? { source: raw.source } : {}),
    ...(typeof raw.task_type === 'string' ? { task_type: raw.task_type } : {}),
    ...(typeof raw.parent_run_id === 'string' ? { parent_run_id: raw.parent_run_id } : {}),
    outcome: { success, ...(typeof outcome.detail === 'string' ? { detail: outcome.detail } : {}) },
    calls,
  });
}
