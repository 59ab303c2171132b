/**
 * The guard in the Claude Agent SDK's `query()`. `npm run example:claude-agent-sdk` installs the
 * packed package and the SDK in a temp project and runs this file there, with a local fake of the
 * Messages API as the model: it pays for order A1 twice, then runs the same Bash command again and
 * again. The guard lets the first payment run, answers the second with the recorded payment, lets
 * the command run twice, denies the third with its reason, and ends the query when the model asks
 * once more. In a project of your own (the SDK installed, `ANTHROPIC_API_KEY` set) a real model
 * decides what to call.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSdkMcpServer, query, tool } from '@anthropic-ai/claude-agent-sdk';
import { createGuard } from 'loopguard';
import { claudeAgentGuard } from 'loopguard/claude-agent-sdk';
import { z } from 'zod';

const dataDir = mkdtempSync(join(tmpdir(), 'loopguard-example-claude-'));
let charges = 0;
const loopguard = await createGuard({ dataDir });
const run = await loopguard.startRun({ runId: 'order-A1', tenant: 'acme' });
const chargeCard = (amount: number) => ({ payment_id: `p-${++charges}`, amount });

// readme:start claude-agent-sdk
const guard = claudeAgentGuard(run, {
  // The guard knows an MCP tool by the name the model calls it; a key makes the call a side effect.
  operationKey: (name, args) =>
    name === 'mcp__shop__charge_card' ? `acme:charge:${String(args.order)}` : undefined,
});
const charge = tool(
  'charge_card',
  'Charge the customer card for an order',
  { order: z.string(), amount: z.number() },
  async ({ amount }) => ({ content: [{ type: 'text', text: JSON.stringify(chargeCard(amount)) }] }),
);
const q = query({
  prompt: 'Refund order A1, then check the refund log',
  options: {
    hooks: guard.hooks, // PreToolUse denies with the guard's reason, PostToolUse records results
    mcpServers: { shop: createSdkMcpServer(guard.mcpServer({ name: 'shop', tools: [charge] })) },
    allowedTools: ['Bash', 'mcp__shop__charge_card'], // the SDK's own permissions stay as they are
  },
});
// readme:end claude-agent-sdk

for await (const m of q) {
  if (m.type === 'user' && Array.isArray(m.message.content))
    for (const block of m.message.content)
      if (typeof block === 'object' && block.type === 'tool_result')
        console.log(`tool result${block.is_error ? ' (error)' : ''}: ${JSON.stringify(block.content)}`);
  if (m.type === 'result') console.log(`query ended: ${m.subtype}, stop reason ${m.stop_reason}`);
}
console.log(`card charged ${charges} time(s); run ${run.state.status} (${run.state.report?.guardReason})`);
await loopguard.close();
rmSync(dataDir, { recursive: true, force: true });
