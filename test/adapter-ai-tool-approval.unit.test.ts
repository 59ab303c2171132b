/**
 * loopguard/ai's `toolApproval` at the edges of AI SDK 7's approval flow: a tool's own
 * `needsApproval` (which a call-level `toolApproval` replaces) read as the SDK reads it, tools of
 * `generateText` that the guard does not wrap, and call ids a model reuses within one step.
 */
import { generateText, stepCountIs, tool } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { guardToolApproval } from '../src/adapters/ai.js';
import { scripted } from './support/ai-scripted-model.js';
import { type LoopingShop, openLoopingShop } from './support/looping-shop.js';

/** The approvals the SDK asked a person for (not those it answered by itself). */
const humanRequests = (r: { readonly steps: readonly { readonly content: readonly object[] }[] }) =>
  r.steps
    .flatMap((s) => s.content)
    .filter(
      (p) => 'type' in p && p.type === 'tool-approval-request' && !('isAutomatic' in p && p.isAutomatic),
    );

let shop: LoopingShop;
afterEach(() => shop.cleanup());

/** A charge that asks a human above a threshold from the tool's context: 50 when the context leaves it out. */
const thresholdCharge = (s: LoopingShop, needsApproval?: () => boolean) =>
  tool({
    description: 'Charge the customer card for an order',
    inputSchema: z.object({ order: z.string(), amount: z.number() }),
    contextSchema: z.object({ approvalAbove: z.number().default(50) }),
    needsApproval: needsApproval ?? ((input, { context }) => input.amount > context.approvalAbove),
    execute: async (args) => s.chargeCard(args),
  });

const BIG = { order: 'A1', amount: 3000 };
/** The context as the caller gives it: the schema's default fills in the threshold. */
const noThreshold = {} as { approvalAbove: number };

describe("guardToolApproval asks for a tool's own approval as the AI SDK does", () => {
  it('control: given a needsApproval reading its contextSchema default, when the AI SDK alone gets a 3000 charge, then it asks the human', async () => {
    shop = await openLoopingShop('ai-context-control');
    const { model } = scripted([[['charge_card', BIG]], []]);
    const r = await generateText({
      model,
      tools: { charge_card: thresholdCharge(shop) },
      toolsContext: { charge_card: noThreshold },
      prompt: 'Refund order A1',
      stopWhen: stepCountIs(5),
    });
    expect(humanRequests(r)).toHaveLength(1);
    expect(shop.charges()).toBe(0);
  });

  it('given a needsApproval reading its contextSchema default, when the guarded tool gets a 3000 charge, then the human is asked and nothing is charged', async () => {
    shop = await openLoopingShop('ai-context');
    const { model } = scripted([[['charge_card', BIG]], []]);
    const { tools, toolApproval } = guardToolApproval(
      shop.run,
      { charge_card: thresholdCharge(shop) },
      shop.guardOptions,
    );
    const r = await generateText({
      model,
      tools,
      toolApproval,
      toolsContext: { charge_card: noThreshold },
      prompt: 'Refund order A1',
      stopWhen: stepCountIs(5),
    });
    expect(humanRequests(r)).toHaveLength(1);
    expect(shop.charges()).toBe(0);
  });

  it.each([
    ['a context its contextSchema refuses', { approvalAbove: 'high' }, undefined],
    [
      'a needsApproval that throws',
      noThreshold,
      () => {
        throw new Error('approval service unreachable');
      },
    ],
  ])(
    'given %s, when the guarded tool is called, then the human is asked, never approved by the guard',
    async (_, context, needs) => {
      shop = await openLoopingShop('ai-context-broken');
      const { model } = scripted([[['charge_card', BIG]], []]);
      const { tools, toolApproval } = guardToolApproval(
        shop.run,
        { charge_card: thresholdCharge(shop, needs) },
        shop.guardOptions,
      );
      const r = await generateText({
        model,
        tools,
        toolApproval,
        toolsContext: { charge_card: context as typeof noThreshold },
        prompt: 'Refund order A1',
        stopWhen: stepCountIs(5),
      });
      expect(humanRequests(r)).toHaveLength(1);
      expect(shop.charges()).toBe(0);
    },
  );
});

describe('guardToolApproval and tools of generateText it does not wrap', () => {
  const guardedSearch = (s: LoopingShop) =>
    guardToolApproval(
      s.run,
      {
        search_docs: tool({
          description: 'Search the help center',
          inputSchema: z.object({ q: z.string() }),
          execute: async (a) => s.searchDocs(a),
        }),
      },
      s.guardOptions,
    );
  const refundAll = (needsApproval: boolean, onRun: () => void) =>
    tool({
      description: 'Refund every payment of an order',
      inputSchema: z.object({ order: z.string() }),
      needsApproval,
      execute: async () => {
        onRun();
        return 'refunded';
      },
    });

  it('given a needsApproval tool merged in beside the guarded ones, when the model calls it, then the human is asked and it does not run', async () => {
    shop = await openLoopingShop('ai-extra-tool');
    const { model } = scripted([[['refund_all', { order: 'A1' }]], []]);
    let refunds = 0;
    const { tools, toolApproval } = guardedSearch(shop);
    const r = await generateText({
      model,
      // MCP tools or a second tool set merged in: the SDK hands toolApproval these tools.
      tools: { ...tools, refund_all: refundAll(true, () => refunds++) },
      toolApproval,
      prompt: 'Refund order A1',
      stopWhen: stepCountIs(5),
    });
    expect(humanRequests(r)).toHaveLength(1);
    expect(refunds).toBe(0);
  });

  it('given a tool without needsApproval merged in, when the model calls it, then it runs, and the guard neither decides nor records it', async () => {
    shop = await openLoopingShop('ai-extra-tool-control');
    const { model } = scripted([[['refund_all', { order: 'A1' }]], []]);
    let refunds = 0;
    const { tools, toolApproval } = guardedSearch(shop);
    const r = await generateText({
      model,
      tools: { ...tools, refund_all: refundAll(false, () => refunds++) },
      toolApproval,
      prompt: 'Refund order A1',
      stopWhen: stepCountIs(5),
    });
    expect(humanRequests(r)).toHaveLength(0);
    expect(refunds).toBe(1);
    expect(await shop.auditCalls()).toHaveLength(0);
  });
});

describe('guardToolApproval and a call id reused within one step', () => {
  // Some OpenAI-compatible servers number tool calls per message ("call_0") or send "" for all.
  it('given two searches under one call id, when they run, then each is run and recorded, and each gets its own answer', async () => {
    shop = await openLoopingShop('ai-reused-id');
    const { model, prompts } = scripted([
      [
        ['search_docs', { q: 'refund policy' }, 'call_0'],
        ['search_docs', { q: 'shipping times' }, 'call_0'],
      ],
      [],
    ]);
    const { tools, toolApproval } = guardToolApproval(
      shop.run,
      {
        search_docs: tool({
          description: 'Search the help center',
          inputSchema: z.object({ q: z.string() }),
          execute: async (a) => shop.searchDocs(a),
        }),
      },
      shop.guardOptions,
    );
    const r = await generateText({
      model,
      tools,
      toolApproval,
      prompt: 'Two questions',
      stopWhen: stepCountIs(5),
    });
    expect(shop.searches()).toBe(2);
    expect(r.steps[0]?.toolResults.map((t) => t.output)).toEqual([
      expect.stringContaining('refund policy'),
      expect.stringContaining('shipping times'),
    ]);
    expect(prompts[1]).toContain('shipping times');
    expect(await shop.auditCalls()).toHaveLength(2);
  });

  it('given two emails without an operation key under one call id, when they run, then each is sent once and answered with its own result', async () => {
    shop = await openLoopingShop('ai-reused-id-side-effect');
    const sent: string[] = [];
    const { model } = scripted([
      [
        ['send_email', { to: 'bob@example.com' }, 'call_0'],
        ['send_email', { to: 'alice@example.com' }, 'call_0'],
      ],
      [],
    ]);
    const { tools, toolApproval } = guardToolApproval(
      shop.run,
      {
        send_email: tool({
          description: 'Send an email',
          inputSchema: z.object({ to: z.string() }),
          execute: async (a) => {
            sent.push(a.to);
            return `sent to ${a.to}`;
          },
        }),
      },
      { sideEffects: ['send_email'] },
    );
    const r = await generateText({
      model,
      tools,
      toolApproval,
      prompt: 'Tell Bob and Alice',
      stopWhen: stepCountIs(5),
    });
    expect(sent).toEqual(['bob@example.com', 'alice@example.com']);
    expect(r.steps[0]?.toolResults.map((t) => t.output)).toEqual([
      'sent to bob@example.com',
      'sent to alice@example.com',
    ]);
  });
});
