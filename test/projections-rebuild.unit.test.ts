import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_POLICY, diceSimilarity, RESULT_KINDS, type RecordedEvent } from '../src/domain/index.js';
import { MemorySchemaStore } from '../src/events/index.js';
import { EventStore, MemoryLog } from '../src/log/index.js';
import { Projections } from '../src/projections/index.js';
import { nodeHashing } from '../src/runtime/node-hashing.js';
import { replayRun } from '../src/trace/replay.js';
import type { TraceRun } from '../src/trace/trace-run.js';

const deps = { hashing: nodeHashing('test'), similarity: diceSimilarity };

const call = fc.record({
  tool: fc.constantFrom('search', 'lookup', 'pay', 'poll'),
  args: fc.record({
    q: fc.constantFrom('a', 'b', 'refund policy', 'refund policies'),
    page: fc.integer({ min: 1, max: 3 }),
  }),
  result: fc.constantFrom('r1', 'r2', 'r3', ''),
  kind: fc.option(fc.constantFrom(...RESULT_KINDS), { nil: undefined }),
  code: fc.option(fc.constantFrom('permission_denied', 'timeout', 'boom'), { nil: undefined }),
  operation: fc.option(fc.constantFrom('op-1', 'op-2'), { nil: undefined }),
  afterUserTurn: fc.boolean(),
});

const runs = fc.array(
  fc.record({ calls: fc.array(call, { maxLength: 14 }), success: fc.constantFrom(true, false, null) }),
  { minLength: 1, maxLength: 6 },
);

type GenCall = typeof call extends fc.Arbitrary<infer T> ? T : never;
const toTrace = (i: number, r: { calls: GenCall[]; success: boolean | null }): TraceRun => ({
  run_id: `run-${i}`,
  outcome: { success: r.success },
  calls: r.calls.map((c, step) => ({
    step,
    tool: c.tool,
    args: c.args,
    result: c.result,
    result_sha256: `sha-${c.result}`,
    after_user_turn: step === 0 || c.afterUserTurn,
    ...(c.kind ? { kind: c.kind } : {}),
    ...(c.code ? { code: c.code } : {}),
    ...(c.operation && c.tool === 'pay' ? { operation_key: c.operation, side_effect: true } : {}),
  })),
});

async function collect(it: AsyncIterable<RecordedEvent>): Promise<RecordedEvent[]> {
  const out: RecordedEvent[] = [];
  for await (const e of it) out.push(e);
  return out;
}

describe('rebuild', () => {
  it('replaying the log from offset 0 gives projections equal to the live ones', async () => {
    await fc.assert(
      fc.asyncProperty(runs, async (rs) => {
        const store = await EventStore.create(new MemoryLog(), new MemorySchemaStore());
        const live = new Projections();
        for (const [i, r] of rs.entries()) {
          const { events } = replayRun(toTrace(i, r), DEFAULT_POLICY, deps);
          await store.append(events);
          live.applyAll(events);
        }
        const rebuilt = new Projections().applyAll(await collect(store.readRuns(0)));
        expect(rebuilt.snapshot()).toEqual(live.snapshot());
        expect(rebuilt.events).toBe(live.events);
      }),
      { numRuns: 60 },
    );
  });

  it('the ledger projection keeps a completion over a later claim', () => {
    const p = new Projections();
    const ev = (seq: number, event: RecordedEvent['event']): RecordedEvent => ({
      eventId: `r/${seq}`,
      runId: 'r',
      seq,
      atMs: seq,
      event,
    });
    p.applyAll([
      ev(1, { type: 'OperationClaimed', operationKey: 'k', callId: 'c1' }),
      ev(2, { type: 'OperationCompleted', operationKey: 'k', callId: 'c1', resultJson: '{"ok":1}' }),
      ev(3, { type: 'OperationClaimed', operationKey: 'k', callId: 'c2' }),
    ]);
    expect(p.ledger.get('k')).toMatchObject({ status: 'completed', resultJson: '{"ok":1}', callId: 'c1' });
  });
});

describe('redelivered records', () => {
  it('are folded once: a batch that landed twice leaves the projections as if it landed once', () => {
    const { events } = replayRun(toTrace(0, { calls: [], success: true }), DEFAULT_POLICY, deps);
    const twice = [...events.slice(0, 2), ...events.slice(0, 2), ...events.slice(2)];
    const once = new Projections().applyAll(events);
    const again = new Projections().applyAll(twice);
    expect(again.snapshot()).toEqual(once.snapshot());
    expect(again.duplicates).toBe(2);
    expect(again.events).toBe(once.events);
  });
});
