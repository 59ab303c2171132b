/**
 * A call the guard allowed in AI SDK 7's `toolApproval` whose `execute` never comes: here a model
 * answer cut off at its token limit (finishReason 'length'), whose tool calls the SDK does not run.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateText, tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { guardToolApproval } from '../src/adapters/ai.js';
import { createGuard, type Guard } from '../src/runtime/index.js';

let dataDir: string;
let guard: Guard;
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'lg-ai-cut-off-'));
  guard = await createGuard({
    dataDir,
    policy: { stepTimeoutMs: 200, tools: { charge_card: { sideEffect: true } } },
  });
});
afterEach(async () => {
  await guard.close();
  await rm(dataDir, { recursive: true, force: true });
});

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

/** Step 1 asks for a charge but is cut off (length); step 2 asks for it again, whole; then it answers. */
function cutOffThenWhole(): MockLanguageModelV4 {
  let n = 0;
  const charge = (id: string) => ({
    type: 'tool-call',
    toolCallId: id,
    toolName: 'charge_card',
    input: JSON.stringify({ order: 'A1', amount: 30 }),
  });
  return new MockLanguageModelV4({
    doGenerate: (async () => {
      n++;
      if (n === 1)
        return {
          content: [charge('c1')],
          finishReason: { unified: 'length', raw: 'length' },
          usage,
          warnings: [],
        };
      if (n === 2)
        return {
          content: [charge('c2')],
          finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
          usage,
          warnings: [],
        };
      return {
        content: [{ type: 'text', text: 'done' }],
        finishReason: { unified: 'stop', raw: 'stop' },
        usage,
        warnings: [],
      };
    }) as never,
  });
}

describe('guardToolApproval: an allowed call whose execute never comes', () => {
  it('given a charge allowed in a step the SDK cut off, when the model asks for it again, then it is made once: the first was recorded not run, never in doubt', async () => {
    const run = await guard.startRun({ runId: 'cut-off', tenant: 'acme' });
    let charges = 0;
    let reconciled = 0;
    const opts = {
      operationKey: (t: string, a: Record<string, unknown>) =>
        t === 'charge_card' ? `acme:charge:${String(a.order)}` : undefined,
      reconcile: async () => {
        reconciled++;
        return { happened: false };
      },
    };
    const charge = {
      charge_card: tool({
        description: 'Charge the customer card for an order',
        inputSchema: z.object({ order: z.string(), amount: z.number() }),
        execute: async () => ({ payment: ++charges }),
      }),
    };
    const model = cutOffThenWhole();
    const first = guardToolApproval(run, charge, opts);
    await generateText({
      model,
      tools: first.tools,
      toolApproval: first.toolApproval,
      prompt: 'Refund order A1',
    });
    expect(charges).toBe(0);
    // The next decision waits for the held call, which the step timeout ends as not run: its key
    // is free, so the charge asked again runs once, with no reconcile and no person.
    await generateText({
      model,
      tools: first.tools,
      toolApproval: first.toolApproval,
      prompt: 'Refund order A1',
    });
    expect(charges).toBe(1);
    expect(reconciled).toBe(0);
    expect(run.state.status).toBe('RUNNING');
  });
});
