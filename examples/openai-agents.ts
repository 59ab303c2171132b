/**
 * The guard in the OpenAI Agents SDK's runner, offline: run with `npm run example:openai-agents`.
 * A scripted model pays for order A1 twice, then asks for the same search on every turn. The
 * guard's tool input guardrail lets the first payment run, returns it from the ledger the second
 * time, rejects the repeated search with its reason, and the agent's run ends.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, Runner, tool } from '@openai/agents';
import { functionCall, ScriptedModel } from '@openai/agents/testing';
import { z } from 'zod';
import { agentsGuard } from '../src/adapters/openai-agents.js';
import { createGuard } from '../src/index.js';

const dataDir = mkdtempSync(join(tmpdir(), 'loopguard-example-agents-'));
let charges = 0;
const loopguard = await createGuard({ dataDir });
const run = await loopguard.startRun({ runId: 'order-A1', tenant: 'acme' });
const model = new ScriptedModel(
  Array.from({ length: 20 }, (_, i) => [
    i < 2
      ? functionCall('charge_card', { order: 'A1', amount: 30 }, { callId: `call-${i}` })
      : functionCall('search_docs', { q: 'refund policy' }, { callId: `call-${i}` }),
  ]),
);
const searchDocs = (q: string) => `no document matches ${JSON.stringify(q)}`;
const chargeCard = (amount: number) => ({ payment_id: `p-${++charges}`, amount });
const operationKey = (name: string, args: Record<string, unknown>) =>
  name === 'charge_card' ? `acme:charge:${String(args.order)}` : undefined;

// readme:start openai-agents
const guard = agentsGuard(run, { operationKey });
const search = tool({
  name: 'search_docs',
  description: 'Search the help center',
  parameters: z.object({ q: z.string() }),
  inputGuardrails: [guard.inputGuardrail], // a refusal reaches the model via rejectContent
  execute: guard.execute('search_docs', ({ q }: { q: string }) => searchDocs(q)),
});
const charge = tool({
  name: 'charge_card',
  description: 'Charge the customer card for an order',
  parameters: z.object({ order: z.string(), amount: z.number() }),
  inputGuardrails: [guard.inputGuardrail],
  execute: guard.execute('charge_card', ({ amount }: { amount: number }) => chargeCard(amount)),
});
const agent = new Agent({
  name: 'refunds',
  model,
  tools: [search, charge],
  toolUseBehavior: guard.toolUseBehavior,
});
// readme:end openai-agents

const result = await new Runner({ tracingDisabled: true }).run(agent, 'Refund order A1', { maxTurns: 20 });
for (const item of result.newItems)
  if (item.type === 'tool_call_output_item')
    console.log(
      `${item.rawItem.type === 'function_call_result' ? item.rawItem.name : 'tool'} -> ${JSON.stringify(item.output)}`,
    );
console.log(`final output: ${result.finalOutput}`);
console.log(`card charged ${charges} time(s); run ${run.state.status} (${run.state.report?.guardReason})`);
await loopguard.close();
rmSync(dataDir, { recursive: true, force: true });
