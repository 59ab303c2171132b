import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

const root = join(import.meta.dirname, '..', '..');
const upstreamServer = join(import.meta.dirname, '..', 'fixtures', 'mcp-upstream.mjs');

/**
 * `loopguard mcp` from the sources as a real stdio child of the SDK's Client, in front of the test
 * upstream (test/fixtures/mcp-upstream.mjs) running in its own temporary dir. `log` selects the
 * log (default: an embedded data dir inside that dir); `env` adds to the SDK's default child
 * environment (LOOPGUARD_SECRET_KEY on Kafka); `upstreamArgs` follow the upstream's dir (it
 * ignores them); the caller removes `dir`.
 */
export async function mcpSession(
  opts: { log?: string[]; flags?: string[]; env?: Record<string, string>; upstreamArgs?: string[] } = {},
) {
  const dir = mkdtempSync(join(tmpdir(), 'lg-mcp-'));
  const dataDir = join(dir, 'data');
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [
      '--import',
      'tsx',
      join(root, 'src', 'cli', 'main.ts'),
      'mcp',
      ...(opts.log ?? ['--data-dir', dataDir]),
      ...(opts.flags ?? []),
      '--',
      process.execPath,
      upstreamServer,
      dir,
      ...(opts.upstreamArgs ?? []),
    ],
    cwd: root,
    env: { ...getDefaultEnvironment(), ...opts.env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (b: Buffer) => {
    stderr += b.toString();
  });
  const client = new Client({ name: 'test-client', version: '1' });
  await client.connect(transport);
  const call = async (name: string, args: Record<string, unknown> = {}) =>
    (await client.callTool({ name, arguments: args })) as CallToolResult;
  const text = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
  /** Charges the upstream made, counted by the upstream itself. */
  const charges = () => {
    const f = join(dir, 'charges.log');
    return existsSync(f) ? readFileSync(f, 'utf8').trim().split('\n').length : 0;
  };
  const notes = () => readFileSync(join(dir, 'notes.txt'), 'utf8');
  const upstreamPid = () => Number(readFileSync(join(dir, 'upstream.pid'), 'utf8'));
  return { dir, dataDir, client, call, text, charges, notes, upstreamPid, stderr: () => stderr };
}
