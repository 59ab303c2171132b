import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fakeModel } from '@langchain/core/testing';
import { Command, MemorySaver } from '@langchain/langgraph';
import { createAgent, humanInTheLoopMiddleware, tool } from 'langchain';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { loopguardMiddleware } from '../src/adapters/langchain.js';
import { createGuard } from '../src/runtime/index.js';
import { CHARGE, type LoopingShop, openLoopingShop } from './support/looping-shop.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

/**
 * A charge that takes 20 s unless its signal aborts it; it records when it saw the abort, and
 * calls `onStart` as it starts (a caller aborting before the tool ran would prove nothing).
 */
function slowCharge(started: number, onStart: () => void = () => undefined) {
  const seen = { abortedAfterMs: null as number | null, charges: 0 };
  const charge = tool(
    (_args: { order: string; amount: number }, config) =>
      new Promise<string>((resolve, reject) => {
        onStart();
        const done = setTimeout(() => {
          seen.charges++;
          resolve('charged');
        }, 20_000);
        config?.signal?.addEventListener('abort', () => {
          seen.abortedAfterMs = Date.now() - started;
          clearTimeout(done);
          reject(new Error('aborted'));
        });
      }),
    {
      name: 'charge_card',
      description: 'Charge the customer card for an order',
      schema: z.object({ order: z.string(), amount: z.number() }),
    },
  );
  return { charge, seen };
}

const chargeOnce = () => {
  const model = fakeModel();
  model.respondWithTools([{ name: 'charge_card', args: CHARGE, id: 'call-0' }]);
  model.respondWithTools([]);
  return model;
};

describe('loopguard/langchain keeps the framework promises', () => {
  it("a payment in doubt after the guard's step timeout is a ToolMessage with status error, and the timeout reaches the tool", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'lg-lc-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const guard = await createGuard({
      dataDir,
      policy: { stepTimeoutMs: 200, tools: { charge_card: { sideEffect: true } } },
    });
    cleanups.push(() => guard.close());
    const run = await guard.startRun({ runId: 'lc-in-doubt', tenant: 'acme' });
    const started = Date.now();
    const { charge, seen } = slowCharge(started);
    const model = fakeModel();
    model.respondWithTools([{ name: 'charge_card', args: CHARGE, id: 'call-0' }]);
    model.respondWithTools([]);
    const agent = createAgent({
      model,
      tools: [charge],
      middleware: [
        loopguardMiddleware(run, {
          operationKey: (t, args) => (t === 'charge_card' ? `acme:charge:${String(args.order)}` : undefined),
        }),
      ],
    });

    const result = await agent.invoke({ messages: [{ role: 'user', content: 'Refund order A1' }] });

    const toolMessages = result.messages.filter((m) => m.type === 'tool');
    expect(toolMessages).toHaveLength(1);
    expect((toolMessages[0] as { status?: string }).status).toBe('error');
    expect(seen.abortedAfterMs).not.toBeNull();
    expect(seen.abortedAfterMs).toBeLessThan(10_000);
    expect(seen.charges).toBe(0);
    expect(run.state.status).toBe('NEEDS_HUMAN');
  });

  it("the caller's abort at 200 ms reaches the tool at once", async () => {
    const shop: LoopingShop = await openLoopingShop('lc-abort');
    cleanups.push(() => shop.cleanup());
    const started = Date.now();
    const caller = new AbortController();
    const { charge, seen } = slowCharge(started, () => setTimeout(() => caller.abort(), 200));
    const agent = createAgent({
      model: chargeOnce(),
      tools: [charge],
      middleware: [loopguardMiddleware(shop.run, shop.guardOptions)],
    });

    await agent
      .invoke({ messages: [{ role: 'user', content: 'Refund order A1' }] }, { signal: caller.signal })
      .catch(() => undefined);

    expect(seen.abortedAfterMs).not.toBeNull();
    expect(seen.abortedAfterMs).toBeLessThan(10_000);
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('humanInTheLoopMiddleware still interrupts for the human; the card is charged only after the approval', async () => {
    const shop: LoopingShop = await openLoopingShop('lc-hitl');
    cleanups.push(() => shop.cleanup());
    const model = fakeModel();
    model.respondWithTools([{ name: 'charge_card', args: CHARGE, id: 'call-0' }]);
    model.respondWithTools([]);
    const agent = createAgent({
      model,
      tools: [
        tool((args: { order: string; amount: number }) => JSON.stringify(shop.chargeCard(args)), {
          name: 'charge_card',
          description: 'Charge the customer card for an order',
          schema: z.object({ order: z.string(), amount: z.number() }),
        }),
      ],
      checkpointer: new MemorySaver(),
      middleware: [
        humanInTheLoopMiddleware({ interruptOn: { charge_card: true } }),
        loopguardMiddleware(shop.run, shop.guardOptions),
      ],
    });
    const config = { configurable: { thread_id: 'refund-A1' } };

    const first = await agent.invoke({ messages: [{ role: 'user', content: 'Refund order A1' }] }, config);
    expect(first.__interrupt__).toHaveLength(1);
    expect(shop.charges()).toBe(0);

    await agent.invoke(new Command({ resume: { decisions: [{ type: 'approve' }] } }), config);
    expect(shop.charges()).toBe(1);
    const calls = await shop.auditCalls();
    expect(calls.map((c) => `${c.tool}:${c.before?.decision}`)).toEqual(['charge_card:execute']);
  });
});
