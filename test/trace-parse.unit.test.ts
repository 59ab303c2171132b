/**
 * The trace reader checks a run's fields as the library checks startRun's: a task type is a name
 * (bounded, well-formed Unicode). Before 2026-12-03 any string passed: 200,000 characters were
 * recorded as given, and a lone surrogate was recorded as U+FFFD, unlike the policy it chose.
 */
import { describe, expect, it } from 'vitest';
import { parseTraceLine } from '../src/trace/parse-trace.js';

const line = (taskType: unknown) =>
  JSON.stringify({
    run_id: 'r1',
    task_type: taskType,
    outcome: { success: true },
    calls: [{ step: 1, tool: 'search', args: {}, result: 'x', result_sha256: 'ab12' }],
  });

describe('parseTraceLine', () => {
  it.each([
    ['too long', 'x'.repeat(2000), /longer than 1024/],
    ['a lone surrogate', 'a\ud800b', /Unicode|surrogate/i],
    ['blank', '  ', /blank|empty/i],
    ['not a string', 7, /string/],
  ])('refuses a task_type that is %s, naming file, line and field', (_, taskType, problem) => {
    const r = parseTraceLine(line(taskType), 3, 'runs.jsonl');
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error).toMatchObject({
      code: 'invalid_trace',
      details: { file: 'runs.jsonl', line: 3, field: 'task_type' },
    });
    expect(r.error.message).toMatch(problem);
  });

  it('takes a task type that is a name', () => {
    const r = parseTraceLine(line('research'), 1);
    expect(r.ok && r.value.task_type).toBe('research');
  });
});
