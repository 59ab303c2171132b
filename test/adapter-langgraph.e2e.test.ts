import type { AIMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
import { tool } from '@langchain/core/tools';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { GuardedToolNode, guardPostModelHook, guardRoute } from '../src/adapters/langgraph.js';
import { CHARGE, type LoopingShop, openLoopingShop, SEARCH } from './support/looping-shop.js';

let shop: LoopingShop;
afterEach(() => shop.cleanup());

const toolsOf = (s: LoopingShop) => [
  tool((args: { q: string }) => s.searchDocs(args), {
    name: 'search_docs',
    description: 'Search the help center',
    schema: z.object({ q: z.string() }),
  }),
  tool((args: { order: string; amount: number }) => JSON.stringify(s.chargeCard(args)), {
    name: 'charge_card',
    description: 'Charge the customer card for an order',
    schema: z.object({ order: z.string(), amount: z.number() }),
  }),
];

/** Pays for A1 twice, then asks for the same search on every turn it gets (more than the recursion limit needs). */
const loopingModel = () => {
  const model = fakeModel();
  for (let i = 0; i < 40; i++)
    model.respondWithTools([
      i < 2
        ? { name: 'charge_card', args: CHARGE, id: `call-${i}` }
        : { name: 'search_docs', args: SEARCH, id: `call-${i}` },
    ]);
  return model;
};

const refusalsIn = (messages: readonly { type: string; content: unknown; status?: string }[]) =>
  messages
    .filter((m) => m.type === 'tool' && String(m.content).startsWith('[loopguard]'))
    .map((m) => [/^\[loopguard\] stopped \((\w+)\)/.exec(String(m.content))?.[1], m.status]);

describe('loopguard/langgraph', () => {
  it('createReactAgent with GuardedToolNode and guardPostModelHook: charged once, the repeat refused, the graph ends', async () => {
    shop = await openLoopingShop('langgraph-react');
    const model = loopingModel();
    const agent = createReactAgent({
      llm: model,
      tools: new GuardedToolNode(shop.run, toolsOf(shop), shop.guardOptions),
      postModelHook: guardPostModelHook(shop.run),
    });

    const result = await agent.invoke({ messages: [{ role: 'user', content: 'Refund order A1' }] });

    expect(shop.charges()).toBe(1);
    expect(shop.searches()).toBe(2);
    expect(model.callCount).toBe(6);
    expect(refusalsIn(result.messages)).toEqual([['exact_repeat', 'error']]);
    const last = result.messages.at(-1) as AIMessage;
    expect(last.tool_calls ?? []).toEqual([]);
    // The model's last turn had the stop before it; its tool calls then were dropped, its text kept.
    expect(String(model.calls[5]?.messages.at(-1)?.content)).toMatch(
      /^\[loopguard\] stopped \(exact_repeat\)/,
    );
    const calls = await shop.auditCalls();
    expect(calls.map((c) => `${c.tool}:${c.before?.decision}`)).toEqual([
      'charge_card:execute',
      'charge_card:return_cached_success',
      'search_docs:execute',
      'search_docs:execute',
      'search_docs:stop_partial',
    ]);
  });

  it('without the end condition the same graph runs into GraphRecursionError (why guardPostModelHook exists)', async () => {
    shop = await openLoopingShop('langgraph-no-end');
    const agent = createReactAgent({
      llm: loopingModel(),
      tools: new GuardedToolNode(shop.run, toolsOf(shop), shop.guardOptions),
    });
    await expect(
      agent.invoke({ messages: [{ role: 'user', content: 'Refund order A1' }] }, { recursionLimit: 25 }),
    ).rejects.toMatchObject({ name: 'GraphRecursionError' });
    expect(shop.charges()).toBe(1);
  });

  it('a hand-built graph with GuardedToolNode and guardRoute ends after the model read the stop', async () => {
    shop = await openLoopingShop('langgraph-graph');
    const model = loopingModel();
    const tools = toolsOf(shop);
    const bound = model.bindTools(tools);
    const graph = new StateGraph(MessagesAnnotation)
      .addNode('model', async (state) => ({ messages: [await bound.invoke(state.messages)] }))
      .addNode('tools', new GuardedToolNode(shop.run, tools, shop.guardOptions))
      .addEdge(START, 'model')
      .addConditionalEdges(
        'model',
        guardRoute(shop.run, (state: typeof MessagesAnnotation.State) =>
          ((state.messages.at(-1) as AIMessage).tool_calls?.length ?? 0) > 0 ? 'tools' : END,
        ),
      )
      .addEdge('tools', 'model')
      .compile();

    const result = await graph.invoke({ messages: [{ role: 'user', content: 'Refund order A1' }] });

    expect(shop.charges()).toBe(1);
    expect(shop.searches()).toBe(2);
    expect(model.callCount).toBe(6);
    expect(refusalsIn(result.messages)).toEqual([['exact_repeat', 'error']]);
    expect(String(model.calls[5]?.messages.at(-1)?.content)).toMatch(
      /^\[loopguard\] stopped \(exact_repeat\)/,
    );
  });
});
