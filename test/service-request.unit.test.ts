/**
 * Service requests become the library's commands, and a refused request names the field it got
 * wrong; decisions are read off the events the shared decider recorded.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DEFAULT_POLICY, diceSimilarity } from '../src/domain/index.js';
import { MemoryLedger } from '../src/log/memory-ledger.js';
import { ManualClock, RunActor } from '../src/machines/index.js';
import { nodeHashing } from '../src/runtime/node-hashing.js';
import { decideRequest } from '../src/service/decide-request.js';
import { requestCommand } from '../src/service/request-command.js';
import { emptyRequest, type RequestType, type WireRequest } from '../src/service/service-topics.js';

const req = (type: RequestType, fields: Partial<WireRequest> = {}, id = 'req-1'): WireRequest => ({
  ...emptyRequest(id, 'run-1', type, 0),
  ...fields,
});

const HASHING = nodeHashing('test-key');
const CTX = { policy: DEFAULT_POLICY, hashing: HASHING, workerId: 'w1', ledger: new MemoryLedger() };

describe('requestCommand', () => {
  const refused: [string, WireRequest][] = [
    ['request_id', req('START_RUN', { request_id: '' })],
    ['run_id', req('START_RUN', { run_id: '' })],
    ['run_id', req('START_RUN', { run_id: '   ' })],
    ['tenant', req('START_RUN', { tenant: ' ' })],
    // As the library's startRun refuses them (they were recorded before 2026-12-03).
    ['progress_version', req('START_RUN', { progress_version: -5 })],
    ['task_type', req('START_RUN', { task_type: 'x'.repeat(2000) })],
    ['tool', req('TOOL_CALL', { tool: ' ' })],
    ['progress_version', req('TOOL_CALL', { tool: 'search', progress_version: 1.5 })],
    ['cost_estimate_usd', req('TOOL_CALL', { tool: 'search', cost_estimate_usd: -1 })],
    ['tokens', req('TOOL_RESULT', { call_id: 'c', tokens: 1.5 })],
    ['retry_after_ms', req('TOOL_RESULT', { call_id: 'c', retry_after_ms: 1e300 })],
    ['result_code', req('TOOL_RESULT', { call_id: 'c', result_code: ' ' })],
    ['result_json', req('TOOL_RESULT', { call_id: 'c', result_json: '{oops' })],
    ['tool', req('TOOL_CALL')],
    ['args_json', req('TOOL_CALL', { tool: 'search', args_json: '{not json' })],
    ['call_id', req('TOOL_RESULT')],
    ['result_kind', req('TOOL_RESULT', { call_id: 'c', result_kind: 'MAYBE' })],
    ['verified', req('FINISH')],
    ['precondition_change', req('RESUME', { precondition_change: '  ' })],
    ['tokens_in', req('MODEL_USAGE', { tokens_out: 1 })],
    ['tokens_out', req('MODEL_USAGE', { tokens_in: 1 })],
    ['tokens_in', req('MODEL_USAGE', { tokens_in: -1, tokens_out: 1 })],
    ['cost_usd', req('MODEL_USAGE', { tokens_in: 1, tokens_out: 1, cost_usd: -0.5 })],
    ['checkpoint_id', req('CHECKPOINT', { checkpoint_id: ' ' })],
    ['operation_key', req('SETTLE', { happened: true, settled_by: 'ops' })],
    ['happened', req('SETTLE', { operation_key: 'k', settled_by: 'ops' })],
    ['settled_by', req('SETTLE', { operation_key: 'k', happened: false })],
    [
      'result_json',
      req('SETTLE', { operation_key: 'k', happened: true, settled_by: 'ops', result_json: '{' }),
    ],
    // A reconcile answer (sent after a `reconcile` decision) is about the call's operation key.
    ['reconciled', req('TOOL_CALL', { tool: 'charge', reconciled: true, result_json: '"paid"' })],
    [
      'result_json',
      req('TOOL_CALL', { tool: 'charge', operation_key: 'k', reconciled: true, result_json: '{' }),
    ],
    ['type', req('UNKNOWN')],
    // Decided against the ledger instead (decideReissue): it becomes no run command.
    ['type', req('REISSUE', { operation_key: 'k', new_operation_key: 'k2', reason: 'again' })],
  ];
  for (const [field, r] of refused) {
    it(`refuses a request with a bad ${field}, naming it`, () => {
      const got = requestCommand(r, DEFAULT_POLICY, HASHING);
      expect(got.ok).toBe(false);
      if (!got.ok) {
        expect(got.error.code).toBe('bad_request');
        expect(got.error.details.field).toBe(field);
        expect(got.error.message).toContain(field);
      }
    });
  }

  it('gives a tool call its request id as call id, and a result the sha256 of the JSON it records', () => {
    const call = requestCommand(
      req('TOOL_CALL', { tool: 'search', args_json: '{"q":1}' }),
      DEFAULT_POLICY,
      HASHING,
    );
    expect(call).toMatchObject({
      ok: true,
      value: { type: 'RequestToolCall', callId: 'req-1', args: { q: 1 } },
    });
    const result = requestCommand(
      req('TOOL_RESULT', { call_id: 'req-1', result_json: '"x"' }),
      DEFAULT_POLICY,
      HASHING,
    );
    expect(result).toMatchObject({
      ok: true,
      value: {
        type: 'CompleteToolCall',
        kind: 'SUCCESS',
        resultHash: createHash('sha256').update('"x"').digest('hex'),
      },
    });
  });
});

describe('a published result', () => {
  it('is recorded with its secrets redacted under the workers key, whatever the client sent', () => {
    const raw = JSON.stringify({ token: 'sk-live-4eC39HqLyjWDarjtT1zdp7dc', rows: 2 });
    const got = requestCommand(
      req('TOOL_RESULT', { call_id: 'c', result_json: raw, result_hash: 'client-hash' }),
      DEFAULT_POLICY,
      HASHING,
    );
    expect(got.ok).toBe(true);
    if (!got.ok || got.value.type !== 'CompleteToolCall') return;
    expect(got.value.resultJson).not.toContain('sk-live');
    expect(got.value.resultJson).toContain('"rows":2');
    expect(got.value.resultHash).toBe(
      createHash('sha256')
        .update(got.value.resultJson ?? '')
        .digest('hex'),
    );
  });
});

describe('decideRequest', () => {
  const deps = { hashing: nodeHashing('k'), similarity: diceSimilarity };

  it('answers with the decider recorded decision: identical calls stop at sameCallLimit', async () => {
    const clock = new ManualClock(1_000);
    const actor = new RunActor('run-1', deps, clock);
    const seen: string[] = [];
    const step = async (r: WireRequest) => {
      const d = await decideRequest(actor, r, CTX, clock.now());
      seen.push(d.decision.decision);
      clock.advance(10);
      return d;
    };
    await step(req('START_RUN', {}, 's'));
    for (let i = 1; i <= 3; i++) {
      const call = await step(req('TOOL_CALL', { tool: 'search', args_json: '{"q":"same"}' }, `c${i}`));
      if (call.decision.decision === 'execute')
        await step(req('TOOL_RESULT', { call_id: `c${i}`, result_json: '"none"' }, `r${i}`));
    }
    expect(seen).toEqual(['recorded', 'execute', 'continue', 'execute', 'continue', 'stop_partial']);
    expect(actor.state.status).toBe('STOPPED_LOOP_GUARD');
    const last = await step(req('TOOL_CALL', { tool: 'other', args_json: '{}' }, 'c4'));
    // As in the library: a call after the stop is refused, and the refusal is recorded for the audit.
    expect(last.decision).toMatchObject({
      decision: 'refuse',
      rule: 'run_stopped',
      status: 'STOPPED_LOOP_GUARD',
    });
    expect(last.records.map((r) => r.event.type)).toContain('GuardDecided');
  });

  it('refuses a request for a run never started, naming run_id, and records nothing', async () => {
    const actor = new RunActor('run-1', deps, new ManualClock(0));
    const d = await decideRequest(actor, req('FINISH', { verified: true }), CTX, 0);
    expect(d.records).toEqual([]);
    expect(d.decision).toMatchObject({
      decision: 'error',
      error_code: 'run_not_started',
      error_field: 'run_id',
    });
    expect(actor.state.seq).toBe(0);
  });

  it('counts a model usage toward the run budgets, as the library does: the next call is stopped', async () => {
    const clock = new ManualClock(1_000);
    const actor = new RunActor('run-1', deps, clock);
    const ctx = { ...CTX, policy: { ...DEFAULT_POLICY, maxTokens: 1_000 } };
    const step = async (r: WireRequest) => {
      clock.advance(10);
      return (await decideRequest(actor, r, ctx, clock.now())).decision;
    };
    await step(req('START_RUN', {}, 's'));
    const usage = await step(req('MODEL_USAGE', { tokens_in: 700, tokens_out: 150, cost_usd: 0.02 }, 'u1'));
    expect(usage).toMatchObject({ decision: 'recorded', status: 'RUNNING', error_code: null });
    // 850 of 1,000 is past the 0.8 warning mark: the client hears it.
    expect(usage.warning).toMatch(/token/i);
    expect(actor.state).toMatchObject({ tokens: 850, costUsd: 0.02 });
    await step(req('MODEL_USAGE', { tokens_in: 200, tokens_out: 100 }, 'u2'));
    const call = await step(req('TOOL_CALL', { tool: 'search', args_json: '{}' }, 'c1'));
    expect(call.decision).not.toBe('execute');
    expect(call.rule).toMatch(/token/i);
  });

  it('records a checkpoint and answers with its id, given or made', async () => {
    const clock = new ManualClock(1_000);
    const actor = new RunActor('run-1', deps, clock);
    await decideRequest(actor, req('START_RUN', {}, 's'), CTX, 0);
    const named = await decideRequest(
      actor,
      req('CHECKPOINT', { checkpoint_id: 'after-search' }, 'k1'),
      CTX,
      0,
    );
    expect(named.decision).toMatchObject({ decision: 'recorded', checkpoint_id: 'after-search' });
    const made = await decideRequest(actor, req('CHECKPOINT', {}, 'k2'), CTX, 0);
    expect(made.decision.checkpoint_id).toBe(`checkpoint-${actor.state.seq}`);
    expect(actor.state.lastCheckpoint?.id).toBe(made.decision.checkpoint_id);
  });

  it('settles an in-doubt operation of the run: once it certainly did not happen, it runs again after the resume', async () => {
    const clock = new ManualClock(1_000);
    const actor = new RunActor('run-1', deps, clock);
    const step = async (r: WireRequest) => {
      clock.advance(10);
      return (await decideRequest(actor, r, CTX, clock.now())).decision;
    };
    const charge = (id: string) =>
      req('TOOL_CALL', { tool: 'charge', args_json: '{"n":1}', operation_key: 'k', side_effect: true }, id);
    await step(req('START_RUN', {}, 's'));
    expect((await step(charge('c1'))).decision).toBe('execute');
    await step(req('TOOL_RESULT', { call_id: 'c1', result_kind: 'RETRYABLE', in_doubt: true }, 'r1'));
    expect((await step(charge('c2'))).decision).not.toBe('execute');
    const settled = await step(
      req('SETTLE', { operation_key: 'k', happened: false, settled_by: 'ops' }, 'x1'),
    );
    expect(settled).toMatchObject({ decision: 'recorded', error_code: null });
    // An in-doubt side effect stops the run for a person (NEEDS_HUMAN), as in the library.
    expect(actor.state.status).toBe('NEEDS_HUMAN');
    await step(
      req('RESUME', { precondition_change: 'the provider shows no charge', approved_by: 'ops' }, 'x2'),
    );
    expect((await step(charge('c3'))).decision).toBe('execute');
  });
});
