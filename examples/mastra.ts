/**
 * The guard in a Mastra agent's tool loop, offline: run with `npm run example:mastra`.
 * Mastra's own mock model pays for order A1 twice, then asks for the same search on every step.
 * The wrapped tools let the first payment run, return it from the ledger the second time, answer
 * the repeated search with a Mastra tool error carrying the refusal, and `guardStopped` ends the
 * loop once the model has read the stop.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from '@mastra/core/agent';
import { MastraLanguageModelV2Mock } from '@mastra/core/test-utils/llm-mock';
import { createTool } from '@mastra/core/tools';
import { z } from 'zod';
import { guardStopped, wrapTools } from '../src/adapters/mastra.js';
import { createGuard } from '../src/index.js';

const dataDir = mkdtempSync(join(tmpdir(), 'loopguard-example-mastra-'));
let charges = 0;
const guard = await createGuard({ dataDir });
const run = await guard.startRun({ runId: 'order-A1', tenant: 'acme' });

let turn = 0;
const model = new MastraLanguageModelV2Mock({
  doGenerate: async () => {
    turn++;
    const [toolName, input] =
      turn <= 2 ? ['charge_card', { order: 'A1', amount: 30 }] : ['search_docs', { q: 'refund policy' }];
    return {
      content: [{ type: 'tool-call', toolCallId: `call-${turn}`, toolName, input: JSON.stringify(input) }],
      finishReason: 'tool-calls',
      usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 },
      warnings: [],
    };
  },
});

const search_docs = createTool({
  id: 'search_docs',
  description: 'Search the help center',
  inputSchema: z.object({ q: z.string() }),
  execute: async ({ q }) => `no document matches ${JSON.stringify(q)}`,
});
const charge_card = createTool({
  id: 'charge_card',
  description: 'Charge the customer card for an order',
  inputSchema: z.object({ order: z.string(), amount: z.number() }),
  outputSchema: z.object({ payment_id: z.string(), amount: z.number() }),
  execute: async ({ amount }) => ({ payment_id: `p-${++charges}`, amount }),
});
const operationKey = (name: string, args: Record<string, unknown>) =>
  name === 'charge_card' ? `acme:charge:${String(args.order)}` : undefined;

// readme:start mastra
const agent = new Agent({
  id: 'refunds',
  name: 'refunds',
  instructions: 'Refund orders',
  model,
  tools: wrapTools(run, { search_docs, charge_card }, { operationKey }),
});
const result = await agent.generate('Refund order A1', { maxSteps: 20, stopWhen: guardStopped(run) });
// readme:end mastra

for (const [i, step] of result.steps.entries())
  for (const part of step.content)
    if (part.type === 'tool-result' || part.type === 'tool-error')
      console.log(
        `step ${i + 1} ${part.toolName} -> ${part.type === 'tool-error' ? `error: ${String((part.error as Error).message)}` : JSON.stringify(part.output)}`,
      );
console.log(`model called ${turn} time(s)`);
console.log(`card charged ${charges} time(s); run ${run.state.status} (${run.state.report?.guardReason})`);
await guard.close();
rmSync(dataDir, { recursive: true, force: true });
