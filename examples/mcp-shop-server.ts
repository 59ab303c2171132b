/**
 * A small MCP server for the MCP proxy example (`npm run example:mcp`): a read-only docs search
 * and a card charge that counts its charges, annotated as MCP servers annotate their tools.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

let charges = 0;
const server = new Server({ name: 'shop', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    {
      name: 'search_docs',
      description: 'Searches the shop documentation.',
      inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
      annotations: { readOnlyHint: true },
    },
    {
      name: 'charge_card',
      description: "Charges the customer's card for an order.",
      inputSchema: {
        type: 'object',
        properties: { order: { type: 'string' }, amount: { type: 'number' } },
        required: ['order', 'amount'],
      },
      annotations: { destructiveHint: true },
    },
  ],
}));
server.setRequestHandler(CallToolRequestSchema, async (req) => {
  const args = req.params.arguments ?? {};
  const text = (t: string) => ({ content: [{ type: 'text' as const, text: t }] });
  if (req.params.name === 'search_docs') return text(`no document matches ${JSON.stringify(args.q)}`);
  if (req.params.name === 'charge_card') {
    charges++;
    process.stderr.write(`shop: charged order ${String(args.order)} (${charges} charge(s) so far)\n`);
    return text(`payment p-${charges}: ${String(args.amount)} for order ${String(args.order)}`);
  }
  return { ...text(`unknown tool ${req.params.name}`), isError: true };
});
await server.connect(new StdioServerTransport());
