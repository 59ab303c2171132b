import { Agent, Runner, setTracingDisabled, tool } from '@openai/agents';
import { functionCall, modelResponder, ScriptedModel } from '@openai/agents/testing';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { agentsGuard } from '../src/adapters/openai-agents.js';
import { CHARGE, type LoopingShop, openLoopingShop, SEARCH } from './support/looping-shop.js';

/** A scripted model that pays for A1 twice, then asks for the same search on every turn it gets. */
const loopingModel = () =>
  new ScriptedModel(
    Array.from({ length: 20 }, (_, i) =>
      modelResponder(() => [
        i < 2
          ? functionCall('charge_card', CHARGE, { callId: `call-${i}` })
          : functionCall('search_docs', SEARCH, { callId: `call-${i}` }),
      ]),
    ),
  );

const inputOf = (m: ScriptedModel, i: number) => JSON.stringify(m.calls[i]?.request.input);

let shop: LoopingShop;
beforeAll(() => setTracingDisabled(true));
afterEach(() => shop.cleanup());

describe('loopguard/openai-agents in the Runner', () => {
  it('the input guardrail rejects repeats with the refusal, the card is charged once, the run ends', async () => {
    shop = await openLoopingShop('agents-guardrail');
    const guard = agentsGuard(shop.run, shop.guardOptions);
    const model = loopingModel();
    const agent = new Agent({
      name: 'refunds',
      instructions: 'Refund orders.',
      model,
      toolUseBehavior: guard.toolUseBehavior,
      tools: [
        tool({
          name: 'search_docs',
          description: 'Search the help center',
          parameters: z.object({ q: z.string() }),
          inputGuardrails: [guard.inputGuardrail],
          execute: guard.execute('search_docs', (args: { q: string }) => shop.searchDocs(args)),
        }),
        tool({
          name: 'charge_card',
          description: 'Charge the customer card for an order',
          parameters: z.object({ order: z.string(), amount: z.number() }),
          inputGuardrails: [guard.inputGuardrail],
          execute: guard.execute('charge_card', (args: { order: string; amount: number }) =>
            shop.chargeCard(args),
          ),
        }),
      ],
    });

    const result = await new Runner({ tracingDisabled: true }).run(agent, 'Refund order A1', {
      maxTurns: 20,
    });

    expect(shop.charges()).toBe(1);
    expect(shop.searches()).toBe(2);
    expect(model.calls).toHaveLength(6);
    expect(inputOf(model, 5)).toContain('[loopguard] stopped (exact_repeat)');
    expect(result.finalOutput).toMatch(/^\[loopguard\] STOPPED_LOOP_GUARD \(exact_repeat\)/);
    const rejected = result.toolInputGuardrailResults.filter(
      (g) => g.output.behavior.type === 'rejectContent',
    );
    expect(rejected.map((g) => g.output.outputInfo)).toEqual([
      { rule: 'exact_repeat' },
      { rule: 'run_stopped' },
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

  it('the execute wrapper alone guards the call: the refusal is the tool output', async () => {
    shop = await openLoopingShop('agents-execute');
    const guard = agentsGuard(shop.run, shop.guardOptions);
    const model = loopingModel();
    const agent = new Agent({
      name: 'refunds',
      model,
      toolUseBehavior: guard.toolUseBehavior,
      tools: [
        tool({
          name: 'search_docs',
          description: 'Search the help center',
          parameters: z.object({ q: z.string() }),
          execute: guard.execute('search_docs', (args: { q: string }) => shop.searchDocs(args)),
        }),
        tool({
          name: 'charge_card',
          description: 'Charge the customer card for an order',
          parameters: z.object({ order: z.string(), amount: z.number() }),
          execute: guard.execute('charge_card', (args: { order: string; amount: number }) =>
            shop.chargeCard(args),
          ),
        }),
      ],
    });

    await new Runner({ tracingDisabled: true }).run(agent, 'Refund order A1', { maxTurns: 20 });

    expect(shop.charges()).toBe(1);
    expect(shop.searches()).toBe(2);
    expect(model.calls).toHaveLength(6);
    expect(inputOf(model, 5)).toContain('[loopguard] stopped (exact_repeat)');
    const calls = await shop.auditCalls();
    expect(calls.filter((c) => c.before?.decision !== 'execute').map((c) => c.before?.rule)).toEqual([
      'idempotency',
      'exact_repeat',
      'run_stopped',
    ]);
  });
});
