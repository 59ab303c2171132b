/**
 * loopguard/langchain beside LangChain's own `toolRetryMiddleware`. Listed after the guard's
 * middleware (inside it), the retry would call the tool again within the one call the guard
 * decided: a charge booked twice, with one call in the guard's record. The guard lets the tool be
 * invoked once per decision and records the first failure; listed before it, each retry is a call
 * of its own through the guard.
 */
import { getRetryable } from '@langchain/core/errors';
import { fakeModel } from '@langchain/core/testing';
import { createAgent, tool, toolRetryMiddleware } from 'langchain';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { loopguardMiddleware } from '../src/adapters/langchain.js';
import { LoopguardError } from '../src/domain/index.js';
import { CHARGE, type LoopingShop, openLoopingShop } from './support/looping-shop.js';

let shop: LoopingShop;
afterEach(() => shop.cleanup());

/** A payment provider that books the charge, then loses the answer the first time (a socket reset). */
function flakyCharge(s: LoopingShop) {
  let attempts = 0;
  return tool(
    (args: { order: string; amount: number }) => {
      attempts++;
      const receipt = s.chargeCard(args);
      if (attempts === 1) throw new Error('ECONNRESET after the provider booked the charge');
      return JSON.stringify(receipt);
    },
    {
      name: 'charge_card',
      description: 'Charge the customer card for an order',
      schema: z.object({ order: z.string(), amount: z.number() }),
    },
  );
}

/** A model that pays for A1 once, then answers. */
const chargeOnce = () => {
  const model = fakeModel();
  model.respondWithTools([{ name: 'charge_card', args: CHARGE, id: 'call-0' }]);
  model.respondWithTools([]);
  return model;
};

const recorded = async () =>
  (await shop.auditCalls()).map((c) => `${c.tool}:${c.before?.decision}:${c.result?.kind}`);

describe('loopguard/langchain with toolRetryMiddleware', () => {
  it('given [loopguardMiddleware, toolRetryMiddleware], when a charge books and then throws, then it is not run again: the first failure is recorded in doubt', async () => {
    shop = await openLoopingShop('langchain-retry-inside');
    const refusals: unknown[] = [];
    const retry = toolRetryMiddleware({
      initialDelayMs: 0,
      onFailure: (e) => {
        refusals.push(e);
        return String(e.message);
      },
    });
    const agent = createAgent({
      model: chargeOnce(),
      tools: [flakyCharge(shop)],
      middleware: [loopguardMiddleware(shop.run, shop.guardOptions), retry],
    });

    await agent.invoke({ messages: [{ role: 'user', content: 'Refund order A1' }] });

    expect(shop.charges()).toBe(1);
    // The one decided call, recorded with its first failure (unclassified: in doubt), not a SUCCESS.
    expect(shop.run.state.status).toBe('NEEDS_HUMAN');
    expect(shop.run.state.report?.inDoubtOperations).toEqual(['acme:charge:A1']);
    // The retry's second invoke was refused, marked for LangChain as not worth retrying.
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toBeInstanceOf(LoopguardError);
    expect((refusals[0] as LoopguardError).code).toBe('reentrant_call');
    expect(getRetryable(refusals[0])).toBe(false);
    expect(await recorded()).toEqual(['charge_card:execute:RETRYABLE']);
  });

  it('given [toolRetryMiddleware, loopguardMiddleware], when a charge books and then throws, then the guard answers the failure and the retry does not run it again', async () => {
    shop = await openLoopingShop('langchain-retry-outside');
    const agent = createAgent({
      model: chargeOnce(),
      tools: [flakyCharge(shop)],
      middleware: [
        toolRetryMiddleware({ initialDelayMs: 0 }),
        loopguardMiddleware(shop.run, shop.guardOptions),
      ],
    });

    await agent.invoke({ messages: [{ role: 'user', content: 'Refund order A1' }] });

    expect(shop.charges()).toBe(1);
    expect(shop.run.state.status).toBe('NEEDS_HUMAN');
    expect(shop.run.state.report?.inDoubtOperations).toEqual(['acme:charge:A1']);
    expect(await recorded()).toEqual(['charge_card:execute:RETRYABLE']);
  });
});
