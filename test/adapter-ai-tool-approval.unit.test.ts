/**
 * loopguard/ai's `toolApproval` at the edges of AI SDK 7's approval flow: call ids a model reuses
 * within one step.
 */
import { generateText, stepCountIs, tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { guardToolApproval } from '../src/adapters/ai.js';
import { type LoopingShop, openLoopingShop } from './support/looping-shop.js';

type Call = readonly [id: string, tool: string, input: object];

/** A mock model: step n asks for script[n-1] (with their call ids), a step without calls answers in text. */
function scripted(script: readonly (readonly Call[])[]): { model: MockLanguageModelV4; prompts: string[] } {
  const prompts: string[] = [];
  const usage = {
    inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: 5, text: 5, reasoning: undefined },
  };
  const model = new MockLanguageModelV4({
    doGenerate: (async (options: { prompt: unknown }) => {
      prompts.push(JSON.stringify(options.prompt));
      const calls = script[prompts.length - 1] ?? [];
      return {
        content:
          calls.length === 0
            ? [{ type: 'text', text: 'done' }]
            : calls.map(([toolCallId, toolName, input]) => ({
                type: 'tool-call',
                toolCallId,
                toolName,
                input: JSON.stringify(input),
              })),
        finishReason:
          calls.length === 0
            ? { unified: 'stop', raw: 'stop' }
            : { unified: 'tool-calls', raw: 'tool_calls' },
        usage,
        warnings: [],
      };
    }) as never,
  });
  return { model, prompts };
}

let shop: LoopingShop;
afterEach(() => shop.cleanup());

describe('guardToolApproval and a call id reused within one step', () => {
  // Some OpenAI-compatible servers number tool calls per message ("call_0") or send "" for all.
  it('given two searches under one call id, when they run, then each is run and recorded, and each gets its own answer', async () => {
    shop = await openLoopingShop('ai-reused-id');
    const { model, prompts } = scripted([
      [
        ['call_0', 'search_docs', { q: 'refund policy' }],
        ['call_0', 'search_docs', { q: 'shipping times' }],
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
        ['call_0', 'send_email', { to: 'bob@example.com' }],
        ['call_0', 'send_email', { to: 'alice@example.com' }],
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
