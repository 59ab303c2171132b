/** A run's latest answers are kept for repeats, and only the latest: a run's memory stays bounded. */
import { describe, expect, it } from 'vitest';
import { ANSWERS_KEPT, RecentAnswers } from '../src/service/recent-answers.js';
import type { WireDecision } from '../src/service/service-topics.js';

const decision = (runId: string, requestId: string, seq: number): WireDecision => ({
  request_id: requestId,
  run_id: runId,
  decision: 'recorded',
  status: 'RUNNING',
  seq,
  rule: null,
  message: 'run is RUNNING',
  warning: null,
  wait_until_ms: null,
  evidence_json: null,
  result_json: null,
  report_json: null,
  error_code: null,
  error_field: null,
  worker: 'w1',
  decided_at_ms: seq,
  checkpoint_id: null,
});

describe('RecentAnswers', () => {
  it('answers the latest requests of each run and forgets the oldest beyond the cap', () => {
    const answers = new RecentAnswers();
    for (let i = 1; i <= ANSWERS_KEPT + 1; i++) answers.add(decision('a', `r${i}`, i));
    answers.add(decision('b', 'r1', 1));
    expect(answers.get('a', 'r1')).toBeUndefined();
    expect(answers.get('a', 'r2')?.decision.seq).toBe(2);
    expect(answers.get('a', `r${ANSWERS_KEPT + 1}`)?.decision.seq).toBe(ANSWERS_KEPT + 1);
    expect(answers.get('b', 'r1')?.decision.run_id).toBe('b');
    expect(answers.get('b', 'r2')).toBeUndefined();
  });
});

describe('RecentAnswers: the request each answer was given to', () => {
  it('keeps its body hash, and hands the hashes on for a snapshot', () => {
    const answers = new RecentAnswers();
    answers.add(decision('a', 'r1', 1), 'h1');
    answers.add(decision('a', 'r2', 2));
    expect(answers.get('a', 'r1')?.body).toBe('h1');
    expect(answers.get('a', 'r2')?.body).toBeNull();
    expect(answers.bodiesOf('a')).toEqual({ r1: 'h1' });
  });
});
