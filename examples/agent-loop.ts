/**
 * A tiny agent loop guarded by loopguard: run with `npm run example`.
 * The "model" keeps asking for the same search and tries to pay twice; the guard lets the first
 * payment through, returns it from the ledger the second time, and stops the repeated search.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGuard, guardTools, toModelMessage } from '../src/index.js';

const dataDir = mkdtempSync(join(tmpdir(), 'loopguard-example-'));
let charges = 0;

const guard = await createGuard({
  dataDir,
  policy: { maxSteps: 20, tools: { charge_card: { sideEffect: true } } },
});
const run = await guard.startRun({ runId: 'order-A1', taskType: 'multi_step', tenant: 'acme' });

const tools = guardTools(
  run,
  {
    search_docs: async (args) => `no document matches ${JSON.stringify(String(args.q).trim())}`,
    charge_card: async (args) => {
      charges++;
      return { payment_id: `p-${charges}`, amount: args.amount };
    },
  },
  { operationKey: (tool, args) => (tool === 'charge_card' ? `acme:charge:${args.order}` : undefined) },
);

// What a model might ask for, in order: it pays, times out on its side, pays again, then loops on a search.
const plan: [keyof typeof tools, Record<string, unknown>][] = [
  ['charge_card', { order: 'A1', amount: 30 }],
  ['charge_card', { amount: 30, order: 'A1' }],
  ['search_docs', { q: 'refund policy' }],
  ['search_docs', { q: ' refund policy' }],
  ['search_docs', { q: 'refund policy' }],
  ['search_docs', { q: 'refund policy' }],
];
for (const [tool, args] of plan) {
  const result = await tools[tool](args);
  console.log(`${tool} ${JSON.stringify(args)} -> ${result.status}`);
  console.log(`  to the model: ${toModelMessage(result).split('\n').join(' ')}`);
  if (result.status === 'stopped') break;
}
console.log(`card charged ${charges} time(s); run ${run.state.status} (${run.state.report?.guardReason})`);
await guard.close();
rmSync(dataDir, { recursive: true, force: true });
