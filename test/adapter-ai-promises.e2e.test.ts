import { generateText, type ModelMessage, stepCountIs, tool } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { guardStopped, guardToolApproval, wrapTools } from '../src/adapters/ai.js';
import { scripted } from './support/ai-scripted-model.js';
import { CHARGE, type LoopingShop, openLoopingShop, SEARCH } from './support/looping-shop.js';

let shop: LoopingShop;
afterEach(() => shop.cleanup());

const approvalTools = (s: LoopingShop) => ({
  charge_card: tool({
    description: 'Charge the customer card for an order',
    inputSchema: z.object({ order: z.string(), amount: z.number() }),
    needsApproval: true,
    execute: async (args) => s.chargeCard(args),
  }),
});

describe('loopguard/ai keeps the framework promises', () => {
  it('guardToolApproval: a tool with needsApproval still asks the human; nothing is charged until approved', async () => {
    shop = await openLoopingShop('ai-human-approval');
    const { model } = scripted([[['charge_card', CHARGE]], []]);
    const { tools, toolApproval } = guardToolApproval(shop.run, approvalTools(shop), shop.guardOptions);
    const prompt: ModelMessage[] = [{ role: 'user', content: 'Refund order A1' }];
    const settings = { model, tools, toolApproval, stopWhen: [guardStopped(shop.run), stepCountIs(20)] };

    const first = await generateText({ ...settings, messages: prompt });

    const requests = first.steps.flatMap((s) => s.content).filter((p) => p.type === 'tool-approval-request');
    expect(requests).toHaveLength(1);
    const responses = first.steps
      .flatMap((s) => s.content)
      .filter((p) => p.type === 'tool-approval-response');
    expect(responses).toEqual([]);
    expect(shop.charges()).toBe(0);

    // The human approves; only now does the card get charged, once.
    const approvalId = requests[0]?.approvalId ?? '';
    const second = await generateText({
      ...settings,
      messages: [
        ...prompt,
        ...first.response.messages,
        { role: 'tool', content: [{ type: 'tool-approval-response', approvalId, approved: true }] },
      ],
    });
    expect(shop.charges()).toBe(1);
    expect(second.text).toBe('done');
    const calls = await shop.auditCalls();
    expect(calls.map((c) => `${c.tool}:${c.before?.decision}`)).toEqual(['charge_card:execute']);
  });

  it('guardToolApproval: a human who denies keeps the card uncharged and the guard records nothing', async () => {
    shop = await openLoopingShop('ai-human-denies');
    const { model } = scripted([[['charge_card', CHARGE]], []]);
    const { tools, toolApproval } = guardToolApproval(shop.run, approvalTools(shop), shop.guardOptions);
    const prompt: ModelMessage[] = [{ role: 'user', content: 'Refund order A1' }];
    const first = await generateText({ model, tools, toolApproval, messages: prompt });
    const approvalId =
      first.steps.flatMap((s) => s.content).find((p) => p.type === 'tool-approval-request')?.approvalId ?? '';

    await generateText({
      model,
      tools,
      toolApproval,
      messages: [
        ...prompt,
        ...first.response.messages,
        { role: 'tool', content: [{ type: 'tool-approval-response', approvalId, approved: false }] },
      ],
    });
    expect(shop.charges()).toBe(0);
    expect(await shop.auditCalls()).toEqual([]);
  });

  it('wrapTools: the caller aborting at 200 ms reaches the tool at once, not at its 20 s end', async () => {
    shop = await openLoopingShop('ai-abort');
    const { model, prompts } = scripted([[['slow_search', SEARCH]], []]);
    let abortedAfterMs: number | null = null;
    const caller = new AbortController();
    const started = Date.now();
    const tools = wrapTools(shop.run, {
      slow_search: tool({
        description: 'A search that takes 20 s unless aborted',
        inputSchema: z.object({ q: z.string() }),
        execute: (_args, { abortSignal }) =>
          new Promise<string>((resolve, reject) => {
            // The caller aborts 200 ms after the tool started: an abort before it would prove nothing.
            setTimeout(() => caller.abort(), 200);
            const done = setTimeout(() => resolve('late'), 20_000);
            abortSignal?.addEventListener('abort', () => {
              abortedAfterMs = Date.now() - started;
              clearTimeout(done);
              reject(abortSignal.reason);
            });
          }),
      }),
    });

    // The guard records the aborted call as failed and the loop goes on to its end.
    await generateText({ model, tools, prompt: 'Refund order A1', abortSignal: caller.signal });
    expect(abortedAfterMs).not.toBeNull();
    expect(abortedAfterMs).toBeLessThan(10_000);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(prompts.join('\n')).not.toContain('late');
    const calls = await shop.auditCalls();
    expect(calls.map((c) => c.result?.kind)).toEqual(['RETRYABLE']);
  });

  it('wrapTools: a refusal of a tool with toModelOutput reaches the model as an error text, not as a broken receipt', async () => {
    shop = await openLoopingShop('ai-to-model-output');
    const { model, prompts } = scripted([
      [['charge_card', CHARGE]],
      [['charge_card', CHARGE]],
      [['search_docs', SEARCH]],
      [['search_docs', SEARCH]],
      [['search_docs', SEARCH]],
      [],
    ]);
    const tools = wrapTools(
      shop.run,
      {
        charge_card: tool({
          description: 'Charge the customer card for an order',
          inputSchema: z.object({ order: z.string(), amount: z.number() }),
          outputSchema: z.object({ payment_id: z.string(), amount: z.number() }),
          execute: async (args) => shop.chargeCard(args),
          toModelOutput: ({ output }) => ({ type: 'text', value: `receipt ${output.payment_id}` }),
        }),
        search_docs: tool({
          description: 'Search the help center',
          inputSchema: z.object({ q: z.string() }),
          outputSchema: z.object({ hits: z.number() }),
          execute: async (args) => ({ hits: shop.searchDocs(args).length > 0 ? 0 : 1 }),
          toModelOutput: ({ output }) => ({ type: 'text', value: `${output.hits} hits` }),
        }),
      },
      shop.guardOptions,
    );

    await generateText({
      model,
      tools,
      prompt: 'Refund order A1',
      stopWhen: [guardStopped(shop.run), stepCountIs(20)],
    });

    expect(shop.charges()).toBe(1);
    // The second charge is answered from the ledger with the first receipt, in its declared shape.
    expect(prompts[2]).toContain('receipt p-1');
    expect(prompts.join('\n')).not.toContain('undefined');
    expect(prompts[5]).toContain('"type":"error-text","value":"[loopguard] stopped (exact_repeat)');
  });
});
