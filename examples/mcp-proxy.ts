/**
 * The MCP guard proxy end to end, offline: run with `npm run example:mcp`.
 * An MCP client (the SDK's, standing in for a desktop app and its model) talks to `loopguard mcp`,
 * which starts the shop server behind it. The "model" pays, pays again with the same arguments,
 * then loops on a search: the card is charged once, and the loop is stopped with a `[loopguard]`
 * message the model can read. The stop ends the task, not the server: the next call runs in the
 * session's next run. Closing the client ends the run; the stopped run's audit is printed at the end.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { main } from '../src/cli/main.js';

const root = join(import.meta.dirname, '..');
const dataDir = mkdtempSync(join(tmpdir(), 'loopguard-mcp-example-'));
const tsx = (file: string) => [process.execPath, '--import', 'tsx', join(root, file)];
// What a desktop client's config would run: loopguard mcp --data-dir D -- <the shop server>.
const [node, ...loopguard] = tsx('src/cli/main.ts');
const client = new Client({ name: 'example-app', version: '1' });
await client.connect(
  new StdioClientTransport({
    command: node as string,
    args: [
      ...loopguard,
      'mcp',
      '--data-dir',
      dataDir,
      '--run-id',
      'mcp-example',
      '--',
      ...tsx('examples/mcp-shop-server.ts'),
    ],
    cwd: root,
  }),
);

const tools = (await client.listTools()).tools;
console.log(
  `tools, as the shop lists them: ${tools.map((t) => `${t.name} ${JSON.stringify(t.annotations)}`).join(', ')}`,
);
const plan: [string, Record<string, unknown>][] = [
  ['charge_card', { order: 'A1', amount: 30 }],
  ['charge_card', { amount: 30, order: 'A1' }],
  ['search_docs', { q: 'refund policy' }],
  ['search_docs', { q: 'refund policy' }],
  ['search_docs', { q: 'refund policy' }],
  // After the stop was answered once, the session goes on in run mcp-example-2.
  ['search_docs', { q: 'shipping times' }],
];
for (const [name, args] of plan) {
  const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const text = r.content.map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join(' ');
  console.log(`${name} ${JSON.stringify(args)}${r.isError ? ' (isError)' : ''}\n  the model reads: ${text}`);
}
await client.close();

console.log('\nthe run, from the log (loopguard audit mcp-example):');
await main(['audit', 'mcp-example', '--data-dir', dataDir]);
rmSync(dataDir, { recursive: true, force: true });
