/**
 * LangGraph's own human-in-the-loop inside a tool: `interrupt()` (the documented "review tool
 * calls" pattern) throws a GraphInterrupt that the graph must get to pause; when the person has
 * answered, the graph runs the tool again. Through the guard (GuardedToolNode, and
 * loopguardMiddleware on the same path) the pause is the graph's, not a failure of the call.
 */
import { fakeModel } from '@langchain/core/testing';
import { tool } from '@langchain/core/tools';
import { Command, interrupt, MemorySaver } from '@langchain/langgraph';
import { createReactAgent, ToolNode } from '@langchain/langgraph/prebuilt';
import { createAgent } from 'langchain';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { loopguardMiddleware } from '../src/adapters/langchain.js';
import { GuardedToolNode, guardPostModelHook } from '../src/adapters/langgraph.js';
import { CHARGE, type LoopingShop, openLoopingShop } from './support/looping-shop.js';

let shop: LoopingShop;
afterEach(() => shop.cleanup());

/** A charge that asks a person first, with LangGraph's interrupt(). */
const approvedCharge = (s: LoopingShop) =>
  tool(
    (args: { order: string; amount: number }) => {
      const answer = interrupt({ question: `charge ${args.amount} for ${args.order}?` });
      if (answer !== 'yes') return 'the person declined';
      return JSON.stringify(s.chargeCard(args));
    },
    {
      name: 'charge_card',
      description: 'Charge the customer card for an order',
      schema: z.object({ order: z.string(), amount: z.number() }),
    },
  );

const chargeOnce = () => {
  const model = fakeModel();
  model.respondWithTools([{ name: 'charge_card', args: CHARGE, id: 'call-0' }]);
  model.respondWithTools([]);
  model.respondWithTools([]);
  return model;
};

const config = { configurable: { thread_id: 'refund-A1' } };
const start = { messages: [{ role: 'user', content: 'Refund order A1' }] };
const pausedIn = (r: object) =>
  '__interrupt__' in r && Array.isArray(r.__interrupt__) && r.__interrupt__.length === 1;

const recorded = async () =>
  (await shop.auditCalls()).map((c) => `${c.tool}:${c.before?.decision}:${c.result?.kind}:${c.result?.code}`);

/** The interrupted call is recorded as not run (no claim left, nothing in doubt); the resumed one runs. */
const interruptedThenRun = ['charge_card:execute:RETRYABLE:interrupted', 'charge_card:execute:SUCCESS:null'];

describe('interrupt() in a tool behind the guard', () => {
  it('control: given a plain ToolNode, when the tool calls interrupt(), then the graph pauses', async () => {
    shop = await openLoopingShop('langgraph-interrupt-plain');
    const agent = createReactAgent({
      llm: chargeOnce(),
      tools: new ToolNode([approvedCharge(shop)]),
      checkpointer: new MemorySaver(),
    });
    expect(pausedIn(await agent.invoke(start, config))).toBe(true);
  });

  it('given GuardedToolNode, when the tool calls interrupt(), then the graph pauses, the run goes on, and the approved charge runs once on resume', async () => {
    shop = await openLoopingShop('langgraph-interrupt-guarded');
    const agent = createReactAgent({
      llm: chargeOnce(),
      tools: new GuardedToolNode(shop.run, [approvedCharge(shop)], shop.guardOptions),
      checkpointer: new MemorySaver(),
      postModelHook: guardPostModelHook(shop.run),
    });

    expect(pausedIn(await agent.invoke(start, config))).toBe(true);
    expect(shop.run.state.report).toBeNull();
    expect(shop.charges()).toBe(0);

    const resumed = await agent.invoke(new Command({ resume: 'yes' }), config);
    expect(shop.charges()).toBe(1);
    expect(resumed.messages.filter((m) => m.getType() === 'tool').map((m) => m.content)).toEqual([
      JSON.stringify({ payment_id: 'p-1', amount: 30 }),
    ]);
    expect(shop.run.state.status).toBe('RUNNING');
    expect(await recorded()).toEqual(interruptedThenRun);
  });

  it('given loopguardMiddleware in createAgent, when the tool calls interrupt(), then the agent pauses and the approved charge runs once on resume', async () => {
    shop = await openLoopingShop('langchain-interrupt-guarded');
    const agent = createAgent({
      model: chargeOnce(),
      tools: [approvedCharge(shop)],
      checkpointer: new MemorySaver(),
      middleware: [loopguardMiddleware(shop.run, shop.guardOptions)],
    });

    expect(pausedIn(await agent.invoke(start, config))).toBe(true);
    expect(shop.run.state.report).toBeNull();

    await agent.invoke(new Command({ resume: 'yes' }), config);
    expect(shop.charges()).toBe(1);
    expect(await recorded()).toEqual(interruptedThenRun);
  });
});
