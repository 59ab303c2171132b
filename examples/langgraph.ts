/**
 * The guard in a LangGraph.js `createReactAgent`, offline: run with `npm run example:langgraph`.
 * A fake model pays for order A1 twice, then asks for the same search on every turn. The guarded
 * ToolNode lets the first payment run, returns it from the ledger the second time, answers the
 * repeated search with a ToolMessage refusal (status error), and the post-model hook ends the graph
 * once the model has read the stop, where it would otherwise run into GraphRecursionError.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fakeModel } from '@langchain/core/testing';
import { tool } from '@langchain/core/tools';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { z } from 'zod';
import { GuardedToolNode, guardPostModelHook } from '../src/adapters/langgraph.js';
import { createGuard } from '../src/index.js';

const dataDir = mkdtempSync(join(tmpdir(), 'loopguard-example-langgraph-'));
let charges = 0;
const guard = await createGuard({ dataDir });
const run = await guard.startRun({ runId: 'order-A1', tenant: 'acme' });

const model = fakeModel();
for (let i = 0; i < 40; i++)
  model.respondWithTools([
    i < 2
      ? { name: 'charge_card', args: { order: 'A1', amount: 30 }, id: `call-${i}` }
      : { name: 'search_docs', args: { q: 'refund policy' }, id: `call-${i}` },
  ]);
const searchDocs = tool(({ q }: { q: string }) => `no document matches ${JSON.stringify(q)}`, {
  name: 'search_docs',
  description: 'Search the help center',
  schema: z.object({ q: z.string() }),
});
const chargeCard = tool(
  ({ amount }: { amount: number }) => JSON.stringify({ payment_id: `p-${++charges}`, amount }),
  {
    name: 'charge_card',
    description: 'Charge the customer card for an order',
    schema: z.object({ order: z.string(), amount: z.number() }),
  },
);
const operationKey = (name: string, args: Record<string, unknown>) =>
  name === 'charge_card' ? `acme:charge:${String(args.order)}` : undefined;

// readme:start langgraph
const agent = createReactAgent({
  llm: model,
  tools: new GuardedToolNode(run, [searchDocs, chargeCard], { operationKey }),
  postModelHook: guardPostModelHook(run), // ends the graph once the model has read the stop
});
const result = await agent.invoke({ messages: [{ role: 'user', content: 'Refund order A1' }] });
// readme:end langgraph

for (const m of result.messages)
  if (m.type === 'tool') console.log(`${m.name} -> ${JSON.stringify(m.content)}`);
console.log(`model called ${model.callCount} time(s)`);
console.log(`card charged ${charges} time(s); run ${run.state.status} (${run.state.report?.guardReason})`);
await guard.close();
rmSync(dataDir, { recursive: true, force: true });
