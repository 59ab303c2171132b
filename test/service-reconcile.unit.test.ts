/**
 * A remote run's reconcile as the worker decides it, step by step on one run's actor and a real
 * SQLite ledger (the Kafka round trips are in run-remote.contract.int.test.ts): an in-doubt
 * operation asked by a client with a hook is answered `reconcile` and nothing is recorded; the
 * answer sent with the call again settles the ledger, is recorded before the call, and the call is
 * decided on it. With tenant keys, a reconcile answer (it settles) needs an approver's key.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_POLICY, diceSimilarity, redactText } from '../src/domain/index.js';
import { SqliteLedger } from '../src/log/embedded/sqlite-ledger.js';
import { ManualClock, RunActor } from '../src/machines/index.js';
import { nodeHashing } from '../src/runtime/node-hashing.js';
import { decideRequest } from '../src/service/decide-request.js';
import { emptyRequest, type WireRequest } from '../src/service/service-topics.js';
import { authorize } from '../src/service/tenant-guard.js';

const HASHING = nodeHashing('reconcile-test-key');
const CTX = { policy: DEFAULT_POLICY, hashing: HASHING, workerId: 'w1' };
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const req = (type: WireRequest['type'], id: string, fields: Partial<WireRequest> = {}): WireRequest => ({
  ...emptyRequest(id, 'run-1', type, 0),
  ...fields,
});
const CHARGE = { tool: 'charge', args_json: '{"order":"A1"}', operation_key: 'charge-A1', side_effect: true };

/** A worker's steps on one run: the command path claims, decides and tells the ledger the outcome. */
function worker() {
  const dir = mkdtempSync(join(tmpdir(), 'loopguard-reconcile-'));
  dirs.push(dir);
  const ledger = SqliteLedger.open(dir);
  const clock = new ManualClock(1_000);
  const actor = new RunActor('run-1', { hashing: HASHING, similarity: diceSimilarity }, clock);
  const step = async (r: WireRequest) => {
    clock.advance(10);
    const d = await decideRequest(actor, r, { ...CTX, ledger }, clock.now());
    return { asked: d.decision.decision === 'reconcile', ...d };
  };
  return { ledger, actor, step };
}

describe('a reconcile decided by a worker', () => {
  it("asks the client's hook for its own in-doubt call after the resume, then records the answer and returns it cached", async () => {
    const { ledger, actor, step } = await worker();
    await step(req('START_RUN', 's'));
    expect((await step(req('TOOL_CALL', 'c1', CHARGE))).decision?.decision).toBe('execute');
    await step(req('TOOL_RESULT', 'r1', { call_id: 'c1', result_kind: 'RETRYABLE', in_doubt: true }));
    expect(actor.state.status).toBe('NEEDS_HUMAN');
    await step(req('RESUME', 'u1', { precondition_change: 'provider asked', approved_by: 'ops' }));
    const seq = actor.state.seq;

    const asked = await step(req('TOOL_CALL', 'c2', { ...CHARGE, can_reconcile: true }));
    expect(asked.asked).toBe(true);
    expect(asked.records).toEqual([]);
    // Nothing recorded and the run still live: the hook may settle it.
    expect(actor.state).toMatchObject({ seq, status: 'RUNNING' });

    const answered = await step(
      req('TOOL_CALL', 'c3', {
        ...CHARGE,
        can_reconcile: true,
        reconciled: true,
        result_json: '{"receipt":"r-9"}',
      }),
    );
    expect(answered.records[0]?.event).toMatchObject({
      type: 'OperationCompleted',
      resultJson: '{"receipt":"r-9"}',
    });
    const types = answered.records.map((r) => r.event.type);
    expect(types.slice(0, 2)).toEqual(['OperationCompleted', 'ToolCallRequested']);
    expect(answered.decision).toMatchObject({
      decision: 'return_cached_success',
      result_json: '{"receipt":"r-9"}',
      status: 'RUNNING',
    });
    const key = redactText('charge-A1', HASHING);
    expect(actor.state.operations[key]?.status).toBe('completed');
    expect(await ledger.claim(key, { runId: 'other', callId: 'x' })).toMatchObject({
      status: 'completed',
      resultJson: '{"receipt":"r-9"}',
    });
  });

  it('lets the call run when the answer is that it never happened, and stops without a hook', async () => {
    const { step } = await worker();
    await step(req('START_RUN', 's'));
    await step(req('TOOL_CALL', 'c1', CHARGE));
    await step(req('TOOL_RESULT', 'r1', { call_id: 'c1', result_kind: 'RETRYABLE', in_doubt: true }));
    await step(req('RESUME', 'u1', { precondition_change: 'provider has no record' }));
    const free = await step(req('TOOL_CALL', 'c2', { ...CHARGE, can_reconcile: true, reconciled: false }));
    expect(free.records.map((r) => r.event.type)[0]).toBe('OperationReleased');
    expect(free.decision?.decision).toBe('execute');

    const other = await worker();
    await other.step(req('START_RUN', 's'));
    await other.step(req('TOOL_CALL', 'c1', CHARGE));
    await other.step(req('TOOL_RESULT', 'r1', { call_id: 'c1', result_kind: 'RETRYABLE', in_doubt: true }));
    await other.step(req('RESUME', 'u1', { precondition_change: 'asked nobody' }));
    const noHook = await other.step(req('TOOL_CALL', 'c2', CHARGE));
    expect(noHook).toMatchObject({ asked: false, decision: { decision: 'stop_partial', rule: 'in_doubt' } });
    expect(other.actor.state.status).toBe('NEEDS_HUMAN');
  });

  it("refuses another run's SETTLE of a charge still running (settle_refused), so nobody can charge again", async () => {
    const { ledger, step } = await worker();
    await step(req('START_RUN', 's'));
    expect((await step(req('TOOL_CALL', 'c1', CHARGE))).decision?.decision).toBe('execute');
    // run-2, on the same ledger, settles run-1's live claim as "did not happen", then asks for it.
    const clock = new ManualClock(5_000);
    const other = new RunActor('run-2', { hashing: HASHING, similarity: diceSimilarity }, clock);
    const on2 = (type: WireRequest['type'], id: string, fields: Partial<WireRequest> = {}) =>
      decideRequest(other, { ...req(type, id, fields), run_id: 'run-2' }, { ...CTX, ledger }, clock.now());
    await on2('START_RUN', 's2');
    const settled = await on2('SETTLE', 'x1', {
      operation_key: 'charge-A1',
      happened: false,
      settled_by: 'ops',
    });
    expect(settled.decision).toMatchObject({ decision: 'error', error_code: 'settle_refused' });
    expect(settled.records).toEqual([]);
    expect((await on2('TOOL_CALL', 'c9', CHARGE)).decision.decision).not.toBe('execute');
    expect(await ledger.get(redactText('charge-A1', HASHING))).toMatchObject({ status: 'claimed' });
  });

  it('with tenant keys, takes a reconcile answer only from an approver key; asking needs none', () => {
    const agent = { id: 'a1', tenant: 'a', secret: 's', approver: false };
    const ops = { id: 'a-ops', tenant: 'a', secret: 's', approver: true };
    const run = { started: true, tenant: 'a' };
    const tenants = new Set(['a']);
    const answer = req('TOOL_CALL', 'c1', { ...CHARGE, can_reconcile: true, reconciled: true });
    expect(authorize(agent, answer, run, tenants)).toMatchObject({
      ok: false,
      reason: 'not_approver',
      error: { details: { field: 'reconciled' } },
    });
    expect(authorize(ops, answer, run, tenants)).toMatchObject({
      ok: true,
      req: { operation_key: 'a:charge-A1' },
    });
    expect(
      authorize(agent, req('TOOL_CALL', 'c2', { ...CHARGE, can_reconcile: true }), run, tenants),
    ).toMatchObject({
      ok: true,
    });
  });
});
