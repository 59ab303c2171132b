import { createHash } from 'node:crypto';
import { generateText, type LanguageModel, stepCountIs, streamText, tool } from 'ai';
import { convertArrayToReadableStream, MockLanguageModelV3, MockLanguageModelV4 } from 'ai/test';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { guardStopped, guardToolApproval, wrapTools } from '../src/adapters/ai.js';
import { outcome } from '../src/runtime/index.js';
import { CHARGE, type LoopingShop, openLoopingShop, SEARCH } from './support/looping-shop.js';

type Script = (step: number) => readonly (readonly [string, object])[];
/** Pays for A1 twice, then asks for the same search on every step. */
const paysTwiceThenLoops: Script = (step) => [step <= 2 ? ['charge_card', CHARGE] : ['search_docs', SEARCH]];

type Handlers = { doGenerate: () => Promise<never>; doStream: () => Promise<never> };

/** A mock model that asks for the tool calls its script gives for each step; it records every prompt. */
function scriptedModel<M>(
  make: (handlers: Handlers) => M,
  script: Script = paysTwiceThenLoops,
): { model: M; prompts: string[] } {
  const prompts: string[] = [];
  const respond = (options: { prompt: unknown }) => {
    prompts.push(JSON.stringify(options.prompt));
    const n = prompts.length;
    return {
      content: script(n).map(([toolName, input], i) => ({
        type: 'tool-call',
        toolCallId: `call-${n}-${i}`,
        toolName,
        input: JSON.stringify(input),
      })),
      finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
      usage: {
        inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
        outputTokens: { total: 5, text: 5, reasoning: undefined },
      },
    };
  };
  const doGenerate = async (options: { prompt: unknown }) => ({ ...respond(options), warnings: [] });
  const doStream = async (options: { prompt: unknown }) => {
    const { content, finishReason, usage } = respond(options);
    return {
      stream: convertArrayToReadableStream([
        { type: 'stream-start', warnings: [] },
        ...content,
        { type: 'finish', finishReason, usage },
      ]),
    };
  };
  return { model: make({ doGenerate, doStream } as unknown as Handlers), prompts };
}

const toolsOf = (shop: LoopingShop) => ({
  search_docs: tool({
    description: 'Search the help center',
    inputSchema: z.object({ q: z.string() }),
    execute: async (args) => shop.searchDocs(args),
  }),
  charge_card: tool({
    description: 'Charge the customer card for an order',
    inputSchema: z.object({ order: z.string(), amount: z.number() }),
    execute: async (args) => shop.chargeCard(args),
  }),
});

let shop: LoopingShop;
afterEach(() => shop.cleanup());

describe('loopguard/ai in generateText', () => {
  it('AI SDK 7 toolApproval: repeats are denied with the refusal as reason, the card is charged once, the loop ends', async () => {
    shop = await openLoopingShop('ai-approval');
    const { model, prompts } = scriptedModel((handlers) => new MockLanguageModelV4(handlers));
    const { tools, toolApproval } = guardToolApproval(shop.run, toolsOf(shop), shop.guardOptions);

    const result = await generateText({
      model,
      tools,
      toolApproval,
      prompt: 'Refund order A1',
      stopWhen: [guardStopped(shop.run), stepCountIs(20)],
    });

    expect(shop.charges()).toBe(1);
    expect(shop.searches()).toBe(2);
    // The model was called once more after the stop, with the stop in its prompt, and no more.
    expect(prompts.at(-1)).toContain('[loopguard] stopped (exact_repeat)');
    expect(prompts).toHaveLength(6);
    const denied = result.steps.flatMap((s) => s.content).filter((p) => p.type === 'tool-approval-response');
    expect(denied.filter((p) => !p.approved).map((p) => p.reason)).toEqual([
      expect.stringMatching(/^\[loopguard\] stopped \(exact_repeat\)/),
      expect.stringMatching(/^\[loopguard\] stopped \(run_stopped\)/),
    ]);
    expect(shop.run.state.status).toBe('STOPPED_LOOP_GUARD');

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

  it('wrapTools (AI SDK 5 to 7 execute): a spec-v3 model gets the refusal as the tool output', async () => {
    shop = await openLoopingShop('ai-wrap');
    const { model, prompts } = scriptedModel((handlers) => new MockLanguageModelV3(handlers));

    await generateText({
      model: model as LanguageModel,
      tools: wrapTools(shop.run, toolsOf(shop), shop.guardOptions),
      prompt: 'Refund order A1',
      stopWhen: [guardStopped(shop.run), stepCountIs(20)],
    });

    expect(shop.charges()).toBe(1);
    expect(shop.searches()).toBe(2);
    expect(prompts.at(-1)).toContain('[loopguard] stopped (exact_repeat)');
    expect(prompts).toHaveLength(6);
    const calls = await shop.auditCalls();
    expect(calls.filter((c) => c.before?.decision !== 'execute').map((c) => c.before?.rule)).toEqual([
      'idempotency',
      'exact_repeat',
      'run_stopped',
    ]);
  });

  it('AI SDK 7 toolApproval: several calls in one step are judged one at a time, none waits forever', async () => {
    shop = await openLoopingShop('ai-parallel');
    const { model, prompts } = scriptedModel(
      (handlers) => new MockLanguageModelV4(handlers),
      () => [
        ['charge_card', CHARGE],
        ['search_docs', SEARCH],
      ],
    );
    const { tools, toolApproval } = guardToolApproval(shop.run, toolsOf(shop), shop.guardOptions);

    await generateText({
      model,
      tools,
      toolApproval,
      prompt: 'Refund order A1',
      stopWhen: [guardStopped(shop.run), stepCountIs(20)],
    });

    expect(shop.charges()).toBe(1);
    expect(shop.searches()).toBe(2);
    expect(prompts).toHaveLength(4);
    const calls = await shop.auditCalls();
    expect(calls.map((c) => `${c.tool}:${c.before?.decision}`)).toEqual([
      'charge_card:execute',
      'search_docs:execute',
      'charge_card:return_cached_success',
      'search_docs:execute',
      'charge_card:return_cached_success',
      'search_docs:stop_partial',
      'charge_card:refuse',
      'search_docs:refuse',
    ]);
  });

  it('AI SDK 7 toolApproval: a bounded wait becomes a user approval with the reason', async () => {
    shop = await openLoopingShop('ai-wait');
    let searches = 0;
    const { model } = scriptedModel(
      (handlers) => new MockLanguageModelV4(handlers),
      () => [['search_docs', SEARCH]],
    );
    const { tools, toolApproval } = guardToolApproval(shop.run, {
      search_docs: tool({
        description: 'Search the help center',
        inputSchema: z.object({ q: z.string() }),
        execute: async () => {
          searches++;
          return outcome.retryable('rate_limited', { retryAfterMs: 60_000 });
        },
      }),
    });

    const result = await generateText({
      model,
      tools,
      toolApproval,
      prompt: 'Refund order A1',
      stopWhen: [guardStopped(shop.run), stepCountIs(20)],
    });

    expect(searches).toBe(1);
    const request = result.steps.at(-1)?.content.find((p) => p.type === 'tool-approval-request');
    expect(request?.reason).toMatch(/^\[loopguard\] wait \(backoff\): Wait: retry search_docs in /);
    expect(shop.run.state.status).toBe('WAITING');
  });

  it('AI SDK 7 toolApproval in streamText: the same refusals, the card charged once, the stream ends', async () => {
    shop = await openLoopingShop('ai-stream');
    const { model, prompts } = scriptedModel((handlers) => new MockLanguageModelV4(handlers));
    const { tools, toolApproval } = guardToolApproval(shop.run, toolsOf(shop), shop.guardOptions);

    const result = streamText({
      model,
      tools,
      toolApproval,
      prompt: 'Refund order A1',
      stopWhen: [guardStopped(shop.run), stepCountIs(20)],
    });
    const denials: string[] = [];
    for await (const part of result.fullStream)
      if (part.type === 'tool-approval-response' && !part.approved) denials.push(part.reason ?? '');

    expect(shop.charges()).toBe(1);
    expect(shop.searches()).toBe(2);
    expect(prompts).toHaveLength(6);
    expect(prompts.at(-1)).toContain('[loopguard] stopped (exact_repeat)');
    expect(denials.map((d) => /^\[loopguard\] stopped \((\w+)\)/.exec(d)?.[1])).toEqual([
      'exact_repeat',
      'run_stopped',
    ]);
  });

  it('wrapTools: a streaming execute is judged by its final output, which the model gets', async () => {
    shop = await openLoopingShop('ai-streaming-tool');
    const { model, prompts } = scriptedModel(
      (handlers) => new MockLanguageModelV4(handlers),
      () => [['search_docs', SEARCH]],
    );
    const tools = wrapTools(shop.run, {
      search_docs: tool({
        description: 'Search the help center',
        inputSchema: z.object({ q: z.string() }),
        async *execute(args) {
          yield 'searching...';
          yield shop.searchDocs(args);
        },
      }),
    });

    await generateText({
      model,
      tools,
      prompt: 'Refund order A1',
      stopWhen: [guardStopped(shop.run), stepCountIs(20)],
    });

    expect(shop.searches()).toBe(2);
    expect(prompts[1]).toContain('no document matches');
    expect(prompts[1]).not.toContain('searching...');
    expect(prompts.at(-1)).toContain('[loopguard] stopped (exact_repeat)');
    // The guard recorded the final output itself, not the iterator that would produce it.
    const judged = createHash('sha256')
      .update(JSON.stringify(`no document matches ${JSON.stringify(SEARCH.q)}`))
      .digest('hex');
    const calls = await shop.auditCalls();
    expect(calls[0]?.result?.resultHash).toBe(judged);
  });
});
