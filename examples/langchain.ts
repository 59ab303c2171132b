/**
 * The guard as LangChain.js `createAgent` middleware, offline: run with `npm run example:langchain`.
 * A fake model pays for order A1 twice, then asks for the same search on every turn. The
 * middleware lets the first payment run, returns it from the ledger the second time, answers the
 * repeated search with a ToolMessage refusal without calling the tool, and ends the agent.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fakeModel } from '@langchain/core/testing';
import { createAgent, tool } from 'langchain';
import { z } from 'zod';
import { loopguardMiddleware } from '../src/adapters/langchain.js';
import { createGuard } from '../src/index.js';

const dataDir = mkdtempSync(join(tmpdir(), 'loopguard-example-langchain-'));
let charges = 0;
const guard = await createGuard({ dataDir });
const run = await guard.startRun({ runId: 'order-A1', tenant: 'acme' });

const model = fakeModel();
for (let i = 0; i < 20; i++)
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

// readme:start langchain
const agent = createAgent({
  model,
  tools: [searchDocs, chargeCard],
  middleware: [loopguardMiddleware(run, { operationKey })],
});
// readme:end langchain

const result = await agent.invoke({ messages: [{ role: 'user', content: 'Refund order A1' }] });
for (const m of result.messages)
  if (m.type === 'tool') console.log(`${m.name} -> ${JSON.stringify(m.content)}`);
console.log(`model called ${model.callCount} time(s)`);
console.log(`card charged ${charges} time(s); run ${run.state.status} (${run.state.report?.guardReason})`);
await guard.close();
rmSync(dataDir, { recursive: true, force: true });
