/**
 * loopguard/mastra and a tool that suspends itself for a person (`context.agent.suspend`, Mastra's
 * human-in-the-loop inside a tool): Mastra runs its `execute` again on `resumeGenerate` with the
 * person's answer. The suspended call did not do its work, so the guard must not record it done
 * (that would complete its operation key and answer the resume "already done", uncharged).
 */
import { Agent } from '@mastra/core/agent';
import { Mastra } from '@mastra/core/mastra';
import { InMemoryStore } from '@mastra/core/storage';
import { MastraLanguageModelV2Mock } from '@mastra/core/test-utils/llm-mock';
import { createTool } from '@mastra/core/tools';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { guardStopped, wrapTools } from '../src/adapters/mastra.js';
import { CHARGE, type LoopingShop, openLoopingShop } from './support/looping-shop.js';

let shop: LoopingShop;
afterEach(() => shop.cleanup());

/** Mastra's mock model: asks for the charge once, then answers in text. */
function chargeThenAnswer() {
  const prompts: string[] = [];
  const model = new MastraLanguageModelV2Mock({
    doGenerate: async (options) => {
      prompts.push(JSON.stringify(options.prompt));
      const first = prompts.length === 1;
      return {
        content: first
          ? [
              {
                type: 'tool-call' as const,
                toolCallId: 'call-1',
                toolName: 'charge_card',
                input: JSON.stringify(CHARGE),
              },
            ]
          : [{ type: 'text' as const, text: 'done' }],
        finishReason: first ? 'tool-calls' : 'stop',
        usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 },
        warnings: [],
      };
    },
  });
  return { model, prompts };
}

/** Charges only once a person has approved: suspends first, charges on the resume. */
const suspendingCharge = (s: LoopingShop) =>
  createTool({
    id: 'charge_card',
    description: 'Charge the customer card for an order, after a person approves',
    inputSchema: z.object({ order: z.string(), amount: z.number() }),
    suspendSchema: z.object({ question: z.string() }),
    resumeSchema: z.object({ approved: z.boolean() }),
    execute: async (args, context) => {
      const resumeData = context?.agent?.resumeData as { approved: boolean } | undefined;
      if (resumeData === undefined) {
        await context?.agent?.suspend({ question: `charge ${args.amount} for ${args.order}?` });
        return undefined;
      }
      if (!resumeData.approved) return { declined: true };
      return s.chargeCard(args);
    },
  });

/** The same as an AI SDK tool (Mastra takes its shape): Mastra hands it `suspend` and `resumeData` in its options. */
const suspendingAiCharge = (s: LoopingShop) => ({
  id: 'charge_card',
  description: 'Charge the customer card for an order, after a person approves',
  inputSchema: z.object({ order: z.string(), amount: z.number() }),
  execute: async (
    args: { order: string; amount: number },
    options: { suspend: (payload: object) => Promise<void>; resumeData?: object },
  ) => {
    if (options.resumeData === undefined) {
      await options.suspend({ question: `charge ${args.amount} for ${args.order}?` });
      return undefined;
    }
    return s.chargeCard(args);
  },
});

/** An agent with the charge tool, behind the guard or not, registered with Mastra (suspension needs storage). */
function shopAgent(
  s: LoopingShop,
  guarded: boolean,
  charge: ReturnType<typeof suspendingCharge | typeof suspendingAiCharge> = suspendingCharge(s),
) {
  const { model, prompts } = chargeThenAnswer();
  const tools = { charge_card: charge };
  const agent = new Agent({
    id: 'shop',
    name: 'shop',
    instructions: 'Refund orders',
    model,
    tools: guarded ? wrapTools(s.run, tools, s.guardOptions) : tools,
  });
  new Mastra({ agents: { agent }, storage: new InMemoryStore(), logger: false });
  return { agent, prompts, options: { maxSteps: 5, ...(guarded ? { stopWhen: guardStopped(s.run) } : {}) } };
}

/** What the model read as the result of each tool call, in order. */
const toolOutputs = (prompt: string | undefined) =>
  (JSON.parse(prompt ?? '[]') as { role: string; content: unknown }[])
    .filter((m) => m.role === 'tool')
    .flatMap((m) => m.content as { toolName: string; output: { type: string; value: unknown } }[])
    .map((p) => [p.toolName, p.output.type, p.output.value] as const);

describe('loopguard/mastra: a tool that suspends itself for a person', () => {
  it('control: given no guard, when the person approves the resume, then the card is charged once', async () => {
    shop = await openLoopingShop('mastra-suspend-control');
    const { agent, options } = shopAgent(shop, false);
    const first = await agent.generate('Refund order A1', options);
    expect(first.finishReason).toBe('suspended');
    await agent.resumeGenerate({ approved: true }, { ...options, runId: String(first.runId) });
    expect(shop.charges()).toBe(1);
  });

  it('given wrapTools, when the tool suspends, then nothing is charged, the call is recorded as not run and its key stays free', async () => {
    shop = await openLoopingShop('mastra-suspend-pending');
    const { agent, options } = shopAgent(shop, true);

    const first = await agent.generate('Refund order A1', options);

    expect(first.finishReason).toBe('suspended');
    expect(shop.charges()).toBe(0);
    expect(shop.run.state.status).toBe('RUNNING');
    // Another run charging the same order meanwhile is not answered from the suspended call.
    const other = await shop.guard.startRun({ runId: 'mastra-suspend-other', tenant: 'acme' });
    const r = await other.call(
      { tool: 'charge_card', args: CHARGE, operationKey: 'acme:charge:A1', sideEffect: true },
      () => shop.chargeCard(CHARGE),
    );
    expect(r.status).toBe('executed');
    const calls = await shop.auditCalls();
    expect(calls.map((c) => `${c.tool}:${c.before?.decision}:${c.result?.kind}:${c.result?.code}`)).toEqual([
      'charge_card:execute:PRECONDITION:suspended',
    ]);
  });

  it('given wrapTools, when the person approves the resume, then the guard decides it anew and the card is charged once', async () => {
    shop = await openLoopingShop('mastra-suspend-approved');
    const { agent, prompts, options } = shopAgent(shop, true);

    const first = await agent.generate('Refund order A1', options);
    await agent.resumeGenerate({ approved: true }, { ...options, runId: String(first.runId) });

    expect(shop.charges()).toBe(1);
    expect(toolOutputs(prompts.at(-1))).toEqual([['charge_card', 'json', { payment_id: 'p-1', amount: 30 }]]);
    const calls = await shop.auditCalls();
    expect(calls.map((c) => `${c.tool}:${c.before?.decision}:${c.result?.kind}`)).toEqual([
      'charge_card:execute:PRECONDITION',
      'charge_card:execute:SUCCESS',
    ]);
  });

  it('given wrapTools and an AI SDK tool, when the person approves the resume, then the card is charged once', async () => {
    shop = await openLoopingShop('mastra-suspend-ai-tool');
    const { agent, options } = shopAgent(shop, true, suspendingAiCharge(shop));

    const first = await agent.generate('Refund order A1', options);
    expect(first.finishReason).toBe('suspended');
    await agent.resumeGenerate({ approved: true }, { ...options, runId: String(first.runId) });

    expect(shop.charges()).toBe(1);
    const calls = await shop.auditCalls();
    expect(calls.map((c) => `${c.tool}:${c.before?.decision}:${c.result?.kind}`)).toEqual([
      'charge_card:execute:PRECONDITION',
      'charge_card:execute:SUCCESS',
    ]);
  });
});
