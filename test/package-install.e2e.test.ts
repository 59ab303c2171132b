import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * What a new user does: `npm pack`, install the tarball into an empty project, import the package
 * by name and run its command. Offline-friendly: dependencies come from the npm cache when there.
 */
const root = join(import.meta.dirname, '..');
const fixtures = join(import.meta.dirname, 'fixtures');
let project: string;

const sh = (cmd: string, args: string[], cwd: string) =>
  execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

beforeAll(() => {
  project = mkdtempSync(join(tmpdir(), 'lg-installed-'));
  sh('npm', ['pack', '--silent', '--pack-destination', project], root);
  const tarball = readdirSync(project).find((f) => f.endsWith('.tgz'));
  if (tarball === undefined) throw new Error(`npm pack left no tarball in ${project}`);
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({ name: 'uses-loopguard', private: true, type: 'module' }),
  );
  sh(
    'npm',
    ['install', '--no-audit', '--no-fund', '--prefer-offline', '--omit=optional', `./${tarball}`],
    project,
  );
  for (const f of ['use-package.mjs', 'use-package.ts'])
    copyFileSync(join(fixtures, 'installed', f), join(project, f));
}, 240_000);
afterAll(() => {
  if (project) rmSync(project, { recursive: true, force: true });
});

describe('the packed package, installed', () => {
  it('imports every public entry, keeps the internals out, and runs a guarded call', () => {
    const out = JSON.parse(sh(process.execPath, ['use-package.mjs'], project));
    expect(out.version).toBe('0.1.0');
    expect(out.root).toEqual(
      expect.arrayContaining([
        'createGuard',
        'guardTools',
        'outcome',
        'ToolError',
        'toModelMessage',
        'EmbeddedLog',
      ]),
    );
    expect(out.root).toEqual(
      expect.arrayContaining(['SqliteLedger', 'SqliteSchemaStore', 'parsePolicy', 'LoopguardError']),
    );
    for (const internal of [
      'copyState',
      'patch',
      'seenPair',
      'decide',
      'evolve',
      'RunActor',
      'EventCodec',
      'KafkaLog',
    ])
      expect(out.root).not.toContain(internal);
    expect(out.kafka).toEqual(
      expect.arrayContaining(['KafkaLog', 'KafkaLedger', 'RegistrySchemaStore', 'startAlertSubscriber']),
    );
    expect(out.mcp).toEqual(['McpGuardProxy', 'declaredSideEffects', 'isSideEffectTool']);
    expect(out.ai).toEqual(['guardStopped', 'guardToolApproval', 'wrapTools']);
    // The entries resolve; only their optional peer framework is missing in this project.
    expect(out.openaiAgents).toMatch(/Cannot find package '@openai\/agents'/);
    expect(out.langchain).toMatch(/Cannot find package 'langchain'/);
    expect(out.langgraph).toMatch(/Cannot find package '@langchain\/(core|langgraph)'/);
    expect([out.statuses, out.searches]).toEqual([['executed', 'executed', 'stopped'], 2]);
    expect(out.lastMessage).toMatch(/^\[loopguard\] stopped \(exact_repeat\)/);
    expect([out.outcome, out.toolError]).toEqual(['RETRYABLE', true]);
  });

  it('ships declarations that type-check through the exports map', () => {
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    const flags = [
      '--noEmit',
      '--strict',
      '--skipLibCheck',
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
    ];
    // Throws with tsc's diagnostics on any error; an entry without declarations is one (TS7016).
    sh(
      process.execPath,
      [
        tsc,
        ...flags,
        '--types',
        'node',
        '--typeRoots',
        join(root, 'node_modules', '@types'),
        'use-package.ts',
      ],
      project,
    );
  }, 60_000);

  it('installs a working loopguard command', () => {
    const bin = join(project, 'node_modules', '.bin', 'loopguard');
    expect(sh(bin, ['--help'], project)).toMatch(/\n {2}mcp \[options\] \[upstream\.\.\.\]/);
    expect(sh(bin, ['mcp', '--help'], project)).toContain(
      'Usage: loopguard mcp [options] -- COMMAND [ARGS...]',
    );
    const demo = sh(bin, ['demo'], project);
    expect(demo).toMatch(/demo\/exact-repeat\s+STOPPED_LOOP_GUARD\s+exact_repeat/);
    expect(demo).toMatch(/demo\/duplicate-payment\s+COMPLETED/);
  }, 30_000);

  it('runs the installed loopguard mcp in front of an MCP server', async () => {
    const dir = mkdtempSync(join(project, 'mcp-'));
    const client = new Client({ name: 'installed', version: '1' });
    await client.connect(
      new StdioClientTransport({
        command: join(project, 'node_modules', '.bin', 'loopguard'),
        args: [
          'mcp',
          '--data-dir',
          join(dir, 'data'),
          '--',
          process.execPath,
          join(fixtures, 'mcp-upstream.mjs'),
          dir,
        ],
        cwd: project,
        stderr: 'ignore',
      }),
    );
    expect((await client.listTools()).tools.map((t) => t.name).slice(0, 3)).toEqual([
      'search',
      'pay',
      'broken',
    ]);
    const r = await client.callTool({ name: 'search', arguments: { q: 'x' } });
    expect(r.content).toEqual([{ type: 'text', text: 'no document matches "x"' }]);
    await client.close();
  }, 30_000);
});
