import { err, LoopguardError, ok, type Result } from '../domain/errors.js';
import { RESULT_KINDS } from '../domain/events.js';
import type { TraceCall, TraceRun } from './trace-run.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

const OPTIONAL_NUMBERS = [
  'result_len',
  'progress_version',
  'retry_after_ms',
  'cost_usd',
  'tokens',
  'at_ms',
] as const;
const OPTIONAL_STRINGS = ['code', 'operation_key'] as const;

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
  if (typeof raw.run_id !== 'string' || raw.run_id === '')
    return bad('run_id', 'missing or not a non-empty string');
  if (raw.task_type !== undefined && typeof raw.task_type !== 'string')
    return bad('task_type', 'expected a string');
  const outcome = raw.outcome ?? { success: null };
  if (
    !isObj(outcome) ||
    !(outcome.success === null || typeof outcome.success === 'boolean' || outcome.success === undefined)
  ) {
    return bad('outcome.success', 'expected true, false or null');
  }
  if (raw.parent_run_id !== undefined && (typeof raw.parent_run_id !== 'string' || raw.parent_run_id === ''))
    return bad('parent_run_id', 'expected a non-empty string');
  if (raw.parent_run_id === raw.run_id) return bad('parent_run_id', 'a run cannot be its own parent');
  if (!Array.isArray(raw.calls)) return bad('calls', 'expected an array');
  const calls: TraceCall[] = [];
  for (const [i, c] of raw.calls.entries()) {
    const at = `calls[${i}]`;
    if (!isObj(c)) return bad(at, 'expected an object');
    if (typeof c.tool !== 'string' || c.tool === '')
      return bad(`${at}.tool`, 'missing or not a non-empty string');
    if (!isObj(c.args)) return bad(`${at}.args`, 'expected an object');
    if (c.step !== undefined && (typeof c.step !== 'number' || !Number.isInteger(c.step)))
      return bad(`${at}.step`, 'expected an integer');
    if (c.result !== undefined && typeof c.result !== 'string')
      return bad(`${at}.result`, 'expected a string');
    if (typeof c.result_sha256 !== 'string') return bad(`${at}.result_sha256`, 'missing or not a string');
    if (c.after_user_turn !== undefined && typeof c.after_user_turn !== 'boolean')
      return bad(`${at}.after_user_turn`, 'expected a boolean');
    if (c.side_effect !== undefined && typeof c.side_effect !== 'boolean')
      return bad(`${at}.side_effect`, 'expected a boolean');
    if (c.kind !== undefined && !(RESULT_KINDS as readonly unknown[]).includes(c.kind))
      return bad(`${at}.kind`, `expected one of ${RESULT_KINDS.join(', ')}`);
    for (const k of OPTIONAL_NUMBERS) {
      const v = c[k];
      if (v !== undefined && (typeof v !== 'number' || !Number.isFinite(v) || v < 0))
        return bad(`${at}.${k}`, 'expected a non-negative number');
    }
    for (const k of OPTIONAL_STRINGS) {
      if (c[k] !== undefined && typeof c[k] !== 'string') return bad(`${at}.${k}`, 'expected a string');
    }
    calls.push({
      ...(c as unknown as TraceCall),
      step: (c.step as number | undefined) ?? i,
      result: (c.result as string | undefined) ?? '',
      after_user_turn: (c.after_user_turn as boolean | undefined) ?? i === 0,
    });
  }
  const success = (outcome.success as boolean | null | undefined) ?? null;
  return ok({
    run_id: raw.run_id,
    ...(typeof raw.source === 'string' ? { source: raw.source } : {}),
    ...(typeof raw.task_type === 'string' ? { task_type: raw.task_type } : {}),
    ...(typeof raw.parent_run_id === 'string' ? { parent_run_id: raw.parent_run_id } : {}),
    outcome: { success, ...(typeof outcome.detail === 'string' ? { detail: outcome.detail } : {}) },
    calls,
  });
}

export interface ParsedTraces {
  readonly runs: TraceRun[];
  readonly errors: LoopguardError[];
}

/** Reads a whole JSONL text; bad lines are reported and skipped, the other runs go on. */
export function parseTraceText(text: string, file = 'input'): ParsedTraces {
  const runs: TraceRun[] = [];
  const errors: LoopguardError[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    const r = parseTraceLine(line, i + 1, file);
    if (r.ok) runs.push(r.value);
    else errors.push(r.error);
  });
  return { runs, errors };
}
