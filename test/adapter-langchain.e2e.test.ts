import { AIMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
import { createAgent, tool } from 'langchain';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { loopguardMiddleware } from '../src/adapters/langchain.js';
import { CHARGE, type LoopingShop, openLoopingShop, SEARCH } from './support/looping-shop.js';

let shop: LoopingShop;
afterEach(() => shop.cleanup());

const refundsAgent = (model: ReturnType<typeof fakeModel>) =>
  createAgent({
    model,
    tools: [
      tool((args: { q: string }) => shop.searchDocs(args), {
        name: 'search_docs',
        description: 'Search the help center',
        schema: z.object({ q: z.string() }),
      }),
      tool((args: { order: string; amount: number }) => JSON.stringify(shop.chargeCard(args)), {
        name: 'charge_card',
        description: 'Charge the customer card for an order',
        schema: z.object({ order: z.string(), amount: z.number() }),
      }),
    ],
    middleware: [loopguardMiddleware(shop.run, shop.guardOptions)],
  });

describe('loopguard/langchain in createAgent', () => {
  it('wrapToolCall answers repeats with a ToolMessage refusal, the card is charged once, the agent ends', async () => {
    shop = await openLoopingShop('langchain');
    // Pays for A1 twice, then asks for the same search on every turn it gets.
    const model = fakeModel();
    for (let i = 0; i < 20; i++)
      model.respondWithTools([
        i < 2
          ? { name: 'charge_card', args: CHARGE, id: `call-${i}` }
          : { name: 'search_docs', args: SEARCH, id: `call-${i}` },
      ]);
    const agent = refundsAgent(model);

    const result = await agent.invoke(
      { messages: [{ role: 'user', content: 'Refund order A1' }] },
      { recursionLimit: 60 },
    );

    expect(shop.charges()).toBe(1);
    expect(shop.searches()).toBe(2);
    expect(model.callCount).toBe(6);
    const lastPrompt = model.calls[5]?.messages.map((m) => String(m.content)) ?? [];
    expect(lastPrompt.at(-1)).toMatch(/^\[loopguard\] stopped \(exact_repeat\)/);
    const refusals = result.messages.filter(
      (m) => m.type === 'tool' && String(m.content).startsWith('[loopguard]'),
    );
    expect(refusals.map((m) => /^\[loopguard\] stopped \((\w+)\)/.exec(String(m.content))?.[1])).toEqual([
      'exact_repeat',
      'run_stopped',
    ]);

    const calls = await shop.auditCalls();
    expect(calls.map((c) => `${c.tool}:${c.before?.decision}`)).toEqual([
      'charge_card:execute',
      'charge_card:return_cached_success',
      'search_docs:execute',
      'search_docs:execute',
      'search_docs:stop_partial',
      'search_docs:refuse',
    ]);
  });

  it('the model that reads the stop and answers ends the agent with its answer', async () => {
    shop = await openLoopingShop('langchain-answers');
    const model = fakeModel();
    for (let i = 0; i < 5; i++)
      model.respondWithTools([
        i < 2
          ? { name: 'charge_card', args: CHARGE, id: `call-${i}` }
          : { name: 'search_docs', args: SEARCH, id: `call-${i}` },
      ]);
    model.respond((messages) =>
      String(messages.at(-1)?.content).startsWith('[loopguard] stopped')
        ? new AIMessage('Order A1 is charged once; I found no refund policy to cite.')
        : new Error('the model was not shown the stop'),
    );

    const result = await refundsAgent(model).invoke({
      messages: [{ role: 'user', content: 'Refund order A1' }],
    });

    expect(result.messages.at(-1)?.content).toBe(
      'Order A1 is charged once; I found no refund policy to cite.',
    );
    expect(model.callCount).toBe(6);
    expect(shop.charges()).toBe(1);
    expect(shop.searches()).toBe(2);
  });
});
