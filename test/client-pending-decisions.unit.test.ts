/**
 * A client accepts a decision only when its run id and its request id are both the request's: a
 * client that re-publishes a victim's request id on its own (live) run gets an `execute`, and that
 * answer must not reach the victim's call on its cancelled run.
 */
import { describe, expect, it } from 'vitest';
import { PendingDecisions } from '../src/client/pending-decisions.js';
import type { WireDecision } from '../src/service/service-topics.js';

const decision = (run_id: string, request_id: string, d: string, status: string): WireDecision => ({
  request_id,
  run_id,
  decision: d,
  status,
  seq: 3,
  rule: null,
  message: d,
  warning: null,
  wait_until_ms: null,
  evidence_json: null,
  result_json: null,
  report_json: null,
  error_code: null,
  error_field: null,
  worker: 'w',
  decided_at_ms: 0,
  checkpoint_id: null,
});

describe('PendingDecisions', () => {
  it("drops another run's decision under the victim's request id; the victim gets its own", async () => {
    const pending = new PendingDecisions();
    const victim = pending.wait('victim-run', 'req-1', 5_000);
    // The attacker's run is live: its answer to the stolen request id is an execute.
    expect(pending.deliver(decision('attacker-run', 'req-1', 'execute', 'RUNNING'))).toBe(false);
    expect(pending.deliver(decision('victim-run', 'req-1', 'refuse', 'CANCELLED'))).toBe(true);
    await expect(victim).resolves.toMatchObject({ run_id: 'victim-run', decision: 'refuse' });
    pending.clear();
  });

  it('serves two runs waiting on the same request id each with its own decision', async () => {
    const pending = new PendingDecisions();
    const a = pending.wait('run-a', 'same', 5_000);
    const b = pending.wait('run-b', 'same', 5_000);
    pending.deliver(decision('run-b', 'same', 'refuse', 'RUNNING'));
    pending.deliver(decision('run-a', 'same', 'execute', 'RUNNING'));
    await expect(a).resolves.toMatchObject({ run_id: 'run-a', decision: 'execute' });
    await expect(b).resolves.toMatchObject({ run_id: 'run-b', decision: 'refuse' });
  });

  it('times out with decision_timeout naming the run and telling to send the same request id again', async () => {
    const pending = new PendingDecisions();
    await expect(pending.wait('r', 'q', 10)).rejects.toMatchObject({
      code: 'decision_timeout',
      retriable: true,
      message: expect.stringContaining('same request id again'),
    });
  });
});
