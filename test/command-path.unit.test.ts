/**
 * The library and the service are two callers of one command path (src/runtime/command-path.ts):
 * the same commands, given through a GuardedRun and through the worker's decideRequest, record
 * the same events, record for record (a side effect that runs, the same side effect again handed
 * back cached, usage, a checkpoint, a cancel, a call refused after it), and leave the shared
 * ledger the same. The library's call ids are the service's request ids, so even the records'
 * ids must agree.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_POLICY, diceSimilarity, type RecordedEvent, redactText } from '../src/domain/index.js';
import { MemorySchemaStore } from '../src/events/memory-schema-store.js';
import { EventStore } from '../src/log/event-store.js';
import { MemoryLedger } from '../src/log/memory-ledger.js';
import { MemoryLog } from '../src/log/memory-log.js';
import { ManualClock, RunActor } from '../src/machines/index.js';
import type { RunStream } from '../src/ports/run-stream.js';
import { Guard } from '../src/runtime/guard.js';
import { nodeHashing } from '../src/runtime/node-hashing.js';
import { decideRequest } from '../src/service/decide-request.js';
import { emptyRequest, type WireRequest } from '../src/service/service-topics.js';
import { memoryStream } from './support/memory-stream.js';

const SECRET = 'command-path-secret-key-0123456789abcdef';
const CHARGE = { tool: 'charge', args: { order: 'A1' }, operationKey: 'charge-A1', sideEffect: true };

async function throughLibrary(): Promise<{ records: RecordedEvent[]; ledger: MemoryLedger }> {
  const log = new MemoryLog();
  const store = log.runStream(await EventStore.create(log, new MemorySchemaStore()));
  const ledger = new MemoryLedger();
  const guard = new Guard({
    store,
    ledger,
    secretKey: SECRET,
    clock: new ManualClock(1_000),
    similarity: diceSimilarity,
  });
  const run = await guard.startRun({ runId: 'run-1' });
  expect(await run.call({ tool: 'search', args: { q: 'refunds' } }, async () => ['r-1'])).toMatchObject({
    status: 'executed',
  });
  let charged = 0;
  const charge = async () => {
    charged++;
    return { receipt: 'rcpt-9' };
  };
  expect(await run.call(CHARGE, charge)).toMatchObject({ status: 'executed' });
  expect(await run.call(CHARGE, charge)).toMatchObject({
    status: 'cached',
    value: { receipt: 'rcpt-9' },
  });
  expect(charged).toBe(1);
  await run.recordModelUsage({ tokensIn: 120, tokensOut: 30, costUsd: 0.01 });
  await run.checkpoint('after-charge');
  await run.cancel('enough');
  expect(await run.call({ tool: 'search', args: { q: 'more' } }, async () => 'never')).toMatchObject({
    status: 'stopped',
    rule: 'run_stopped',
  });
  await guard.close();
  return { records: await store.readStream('run-1', 1), ledger };
}

/** The library's commands as service requests: each call's request id is the library's call id. */
function requestsLike(library: readonly RecordedEvent[]): WireRequest[] {
  const req = (id: string, type: WireRequest['type'], fields: Partial<WireRequest> = {}): WireRequest => ({
    ...emptyRequest(id, 'run-1', type, 0),
    ...fields,
  });
  const callIds = library.flatMap((r) => (r.event.type === 'ToolCallRequested' ? [r.event.callId] : []));
  const [search, charge, again, late] = callIds as [string, string, string, string];
  const chargeFields = {
    tool: 'charge',
    args_json: '{"order":"A1"}',
    operation_key: 'charge-A1',
    side_effect: true,
  };
  return [
    req('s', 'START_RUN'),
    req(search, 'TOOL_CALL', { tool: 'search', args_json: '{"q":"refunds"}' }),
    req('r1', 'TOOL_RESULT', { call_id: search, result_json: '["r-1"]' }),
    req(charge, 'TOOL_CALL', chargeFields),
    req('r2', 'TOOL_RESULT', { call_id: charge, result_json: '{"receipt":"rcpt-9"}' }),
    req(again, 'TOOL_CALL', chargeFields),
    req('u1', 'MODEL_USAGE', { tokens_in: 120, tokens_out: 30, cost_usd: 0.01 }),
    req('k1', 'CHECKPOINT', { checkpoint_id: 'after-charge' }),
    req('x1', 'CANCEL', { reason: 'enough' }),
    req(late, 'TOOL_CALL', { tool: 'search', args_json: '{"q":"more"}' }),
  ];
}

describe('one command path for the library and the service', () => {
  it('records the same events through both callers, a cached side effect and a refused call included', async () => {
    const library = await throughLibrary();
    const hashing = nodeHashing(SECRET);
    const ledger = new MemoryLedger();
    const actor = new RunActor('run-1', { hashing, similarity: diceSimilarity }, new ManualClock(1_000));
    const ctx = { policy: DEFAULT_POLICY, hashing, workerId: 'w1', ledger };
    const service: RecordedEvent[] = [];
    const decisions: string[] = [];
    for (const r of requestsLike(library.records)) {
      const d = await decideRequest(actor, r, ctx, 1_000);
      service.push(...d.records);
      decisions.push(d.decision.decision);
    }
    expect(decisions).toEqual([
      'recorded',
      'execute',
      'continue',
      'execute',
      'continue',
      'return_cached_success',
      'recorded',
      'recorded',
      'recorded',
      'refuse',
    ]);
    expect(service.map((r) => r.event.type)).toContain('OperationCompleted');
    expect(service).toEqual(library.records);
    const key = redactText('charge-A1', hashing);
    expect(await ledger.get(key)).toEqual(await library.ledger.get(key));
    expect(await ledger.get(key)).toMatchObject({ status: 'completed', resultJson: '{"receipt":"rcpt-9"}' });
  });

  it("cancels a library run whose side effect's result was lost: the call is closed in doubt, as the service closes it", async () => {
    const stream = await memoryStream();
    let refuse = true;
    // The log refuses the write that carries the charge's result; the ledger missed it too.
    const store: RunStream = {
      ...stream,
      readStream: (id, from) => stream.readStream(id, from),
      load: (id) => stream.load(id),
      snapshot: (s) => stream.snapshot(s),
      readAll: (apply) => stream.readAll(apply),
      childrenOf: (id) => stream.childrenOf(id),
      close: () => stream.close(),
      appendToStream: async (id, events, opts) => {
        if (refuse && events.some((e) => e.event.type === 'ToolCallCompleted')) {
          refuse = false;
          throw new Error('disk full');
        }
        return stream.appendToStream(id, events, opts);
      },
    };
    const ledger = new MemoryLedger();
    ledger.complete = async () => {
      throw new Error('ledger down');
    };
    const guard = new Guard({ store, ledger, secretKey: SECRET, clock: new ManualClock(1_000) });
    const run = await guard.startRun({ runId: 'run-1' });
    await expect(run.call(CHARGE, async () => ({ receipt: 'rcpt-9' }))).rejects.toMatchObject({
      code: 'log_unavailable',
    });
    expect(run.state.inFlight).not.toBeNull();
    // Before the one command path, the library refused this cancel (call_in_flight) for good.
    const ended = await run.cancel('the operator stops it');
    expect(ended.status).toBe('NEEDS_HUMAN');
    const key = redactText('charge-A1', nodeHashing(SECRET));
    expect(await ledger.get(key)).toMatchObject({ status: 'in_doubt' });
    const types = (await stream.readStream('run-1', 1)).map((r) => r.event.type);
    expect(types).toContain('OperationInDoubt');
    await guard.close();
  });
});
