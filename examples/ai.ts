/**
 * The guard in the Vercel AI SDK's tool loop, offline: run with `npm run example:ai`.
 * A mock model pays for order A1 twice, then asks for the same search on every step. The guard,
 * as AI SDK 7's `toolApproval`, lets the first payment run, returns it from the ledger the second
 * time, denies the repeated search with its reason, and `guardStopped` ends the loop.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateText, stepCountIs, tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { z } from 'zod';
import { guardStopped, guardToolApproval } from '../src/adapters/ai.js';
import { createGuard } from '../src/index.js';

const dataDir = mkdtempSync(join(tmpdir(), 'loopguard-example-ai-'));
let charges = 0;
const guard = await createGuard({ dataDir });
const run = await guard.startRun({ runId: 'order-A1', tenant: 'acme' });

let turn = 0;
const model = new MockLanguageModelV4({
  doGenerate: async () => {
    turn++;
    const [toolName, input] =
      turn <= 2 ? ['charge_card', { order: 'A1', amount: 30 }] : ['search_docs', { q: 'refund policy' }];
    return {
      content: [{ type: 'tool-call', toolCallId: `call-${turn}`, toolName, input: JSON.stringify(input) }],
      finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
      usage: {
        inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
        outputTokens: { total: 5, text: 5, reasoning: undefined },
      },
      warnings: [],
    };
  },
});

const search_docs = tool({
  description: 'Search the help center',
  inputSchema: z.object({ q: z.string() }),
  execute: async ({ q }) => `no document matches ${JSON.stringify(q)}`,
});
const charge_card = tool({
  description: 'Charge the customer card for an order',
  inputSchema: z.object({ order: z.string(), amount: z.number() }),
  execute: async ({ amount }) => ({ payment_id: `p-${++charges}`, amount }),
});
const operationKey = (name: string, args: Record<string, unknown>) =>
  name === 'charge_card' ? `acme:charge:${String(args.order)}` : undefined;

// readme:start ai
const { tools, toolApproval } = guardToolApproval(run, { search_docs, charge_card }, { operationKey });
const result = await generateText({
  model,
  tools,
  toolApproval,
  prompt: 'Refund order A1',
  stopWhen: [guardStopped(run), stepCountIs(20)],
});
// readme:end ai
for (const [i, step] of result.steps.entries())
  for (const part of step.content) {
    if (part.type === 'tool-result')
      console.log(`step ${i + 1} ${part.toolName} -> ${JSON.stringify(part.output)}`);
    if (part.type === 'tool-approval-response' && !part.approved)
      console.log(`step ${i + 1} ${part.toolCall.toolName} denied: ${part.reason}`);
  }
console.log(`card charged ${charges} time(s); run ${run.state.status} (${run.state.report?.guardReason})`);
await guard.close();
rmSync(dataDir, { recursive: true, force: true });
