import { execFileSync, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * What a new user does: `npm pack`, install the tarball into an empty project, import the package
 * by name and run its command. Offline-friendly: dependencies come from the npm cache when there.
 * Two projects from one tarball: `light` installs the tarball alone (the root library and the
 * embedded commands), `project` adds the optional peers that `loopguard/kafka`, `loopguard/mcp`,
 * `loopguard/metrics` and `loopguard/otel` need, at the exact versions this repo tests.
 */
const root = join(import.meta.dirname, '..');
const fixtures = join(import.meta.dirname, 'fixtures');
const OPTIONAL_PEERS = ['kafkajs', '@modelcontextprotocol/sdk', 'prom-client', '@opentelemetry/api'] as const;
let packDir: string;
let light: string;
let project: string;
let tarballPath: string;
/** Each optional peer as `name@version`, the versions this repo tests with. */
let peers: Record<string, string>;

const sh = (cmd: string, args: string[], cwd: string) =>
  execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const npmInstall = (cwd: string, args: string[]) =>
  sh('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', ...args], cwd);

function newProject(name: string): string {
  const dir = mkdtempSync(join(packDir, `${name}-`));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, private: true, type: 'module' }));
  return dir;
}

/** Bytes of every file under `dir`. */
function bytesUnder(dir: string): number {
  let total = 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true }))
    if (e.isFile()) total += statSync(join(e.parentPath, e.name)).size;
  return total;
}

beforeAll(() => {
  packDir = mkdtempSync(join(tmpdir(), 'lg-installed-'));
  sh('npm', ['pack', '--silent', '--pack-destination', packDir], root);
  const tarball = readdirSync(packDir).find((f) => f.endsWith('.tgz'));
  if (tarball === undefined) throw new Error(`npm pack left no tarball in ${packDir}`);
  // As a user types it: no flag, so optional dependencies would be installed too if there were any.
  light = newProject('uses-loopguard-light');
  npmInstall(light, [join(packDir, tarball)]);
  const dev = (
    JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      devDependencies: Record<string, string>;
    }
  ).devDependencies;
  project = newProject('uses-loopguard');
  peers = Object.fromEntries(OPTIONAL_PEERS.map((p) => [p, `${p}@${dev[p]}`]));
  tarballPath = join(packDir, tarball);
  npmInstall(project, [tarballPath, ...Object.values(peers)]);
  for (const f of ['use-package.mjs', 'use-package.ts', 'packages-loaded.mjs'])
    copyFileSync(join(fixtures, 'installed', f), join(project, f));
  copyFileSync(join(fixtures, 'installed', 'packages-loaded.mjs'), join(light, 'packages-loaded.mjs'));
}, 600_000);
afterAll(() => {
  if (packDir) rmSync(packDir, { recursive: true, force: true });
}, 120_000);

/** What an entry's import resolves, by package name, in `cwd`. */
const loadedBy = (cwd: string, entry: string): string[] =>
  JSON.parse(sh(process.execPath, ['packages-loaded.mjs', entry], cwd));

describe('the light install: the tarball alone', () => {
  it('installs at most 15 packages, none of the optional peers', () => {
    const lock = JSON.parse(readFileSync(join(light, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, unknown>;
    };
    const installed = Object.keys(lock.packages)
      .filter((k) => k !== '')
      .map((k) => k.replace(/^.*node_modules\//, ''));
    const bytes = bytesUnder(join(light, 'node_modules'));
    console.log(
      `light install: ${installed.length} packages (${installed.sort().join(', ')}), ${(bytes / 1e6).toFixed(1)} MB in node_modules`,
    );
    expect(installed).toContain('loopguard');
    expect(installed.length).toBeLessThanOrEqual(15);
    for (const peer of OPTIONAL_PEERS) expect(installed).not.toContain(peer);
    const dirs = readdirSync(join(light, 'node_modules')).filter((d) => !d.startsWith('.'));
    expect(dirs.sort()).toEqual([...new Set(installed.map((p) => p.split('/')[0] ?? p))].sort());
  });

  it('imports the root library and runs a guarded call without the optional peers', () => {
    const script = `import { createGuard } from 'loopguard';
const guard = await createGuard({ dataDir: '.lg' });
const run = await guard.startRun({ runId: 'light-1' });
const r = [];
for (let i = 0; i < 3; i++) r.push((await run.call({ tool: 'search', args: { q: 'x' } }, () => 'none')).status);
await guard.close();
process.stdout.write(r.join(','));`;
    writeFileSync(join(light, 'guarded.mjs'), script);
    expect(sh(process.execPath, ['guarded.mjs'], light)).toBe('executed,executed,stopped');
    expect(loadedBy(light, 'loopguard')).toEqual(['avsc', 'loopguard', 'xstate']);
  });

  it('runs the embedded commands, and names the package a command or flag needs in one line', () => {
    const bin = join(light, 'node_modules', '.bin', 'loopguard');
    expect(sh(bin, ['demo'], light)).toMatch(/demo\/exact-repeat\s+STOPPED_LOOP_GUARD\s+exact_repeat/);
    const kafka = ['--kafka', '--brokers', '127.0.0.1:9', '--registry', 'http://127.0.0.1:9'];
    const fails = (args: string[]) => {
      const r = spawnSync(bin, args, { cwd: light, encoding: 'utf8' });
      return { code: r.status, out: r.stdout, err: r.stderr };
    };
    const message = (what: string, pkgs: string[]) =>
      `${what} needs ${pkgs.length === 1 ? 'the package' : 'the packages'} ${pkgs.join(', ')}: npm install ${pkgs.join(' ')}`;
    const line = (what: string, pkgs: string[]) => `loopguard: missing_dependency: ${message(what, pkgs)}\n`;
    const kafkaPkgs = ['kafkajs'];
    expect(fails(['mcp', '--', process.execPath, 'upstream.mjs'])).toEqual({
      code: 1,
      out: '',
      err: line('mcp', ['@modelcontextprotocol/sdk']),
    });
    expect(fails(['stops', ...kafka])).toEqual({ code: 1, out: '', err: line('--kafka', kafkaPkgs) });
    expect(fails(['serve', ...kafka])).toEqual({
      code: 1,
      out: '',
      err: line('serve', [...kafkaPkgs, 'prom-client']),
    });
    expect(fails(['ui', '--metrics-port', '0', '--data-dir', '.lg'])).toEqual({
      code: 1,
      out: '',
      err: line('--metrics-port', ['prom-client']),
    });
    expect(JSON.parse(fails(['stops', '--json', ...kafka]).out)).toEqual({
      error: { code: 'missing_dependency', message: message('--kafka', kafkaPkgs) },
    });
  }, 60_000);
});

describe('the optional peers installed beside it', () => {
  it('leave the root entry as light: only the entry that needs a peer loads it', () => {
    expect(loadedBy(project, 'loopguard')).toEqual(['avsc', 'loopguard', 'xstate']);
    // The hook sees the peers where an entry does load them: the check above can fail.
    expect(loadedBy(project, 'loopguard/kafka')).toEqual(expect.arrayContaining(['kafkajs', 'prom-client']));
    expect(loadedBy(project, 'loopguard/kafka')).not.toContain('@modelcontextprotocol/sdk');
    expect(loadedBy(project, 'loopguard/mcp')).toEqual(expect.arrayContaining(['@modelcontextprotocol/sdk']));
    for (const peer of ['kafkajs', 'prom-client', '@opentelemetry/api'])
      expect(loadedBy(project, 'loopguard/mcp')).not.toContain(peer);
    expect(loadedBy(project, 'loopguard/metrics')).toEqual(expect.arrayContaining(['prom-client']));
    expect(loadedBy(project, 'loopguard/otel')).toEqual(['@opentelemetry/api', 'loopguard']);
  });
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
      // Plumbing, and what needs an optional peer (prom-client), stay out of the root too.
      'EventStore',
      'TOPICS',
      'runStreamOf',
      'LogRunStream',
      'diceSimilarity',
      'cachedDiceSimilarity',
      'LoopguardMetrics',
    ])
      expect(out.root).not.toContain(internal);
    expect(out.root).toEqual(expect.arrayContaining(['runMachine', 'MemoryLog', 'MemorySchemaStore']));
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

describe("the README's desktop MCP configuration", () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('\n## MCP proxy\n'));
  const [config] = [...section.matchAll(/```json\n([\s\S]*?)```/g)].map(
    (m) => JSON.parse(m[1] ?? '') as { mcpServers: Record<string, { command: string; args: string[] }> },
  );

  it('runs the installed loopguard by its path: never npx, which would fetch whatever holds the name', () => {
    for (const entry of Object.values(config?.mcpServers ?? {})) {
      expect(entry.command).toMatch(/^\/.*\/loopguard$/);
      expect(entry.args[0]).toBe('mcp');
    }
    expect(Object.keys(config?.mcpServers ?? {})).toEqual(['filesystem', 'shop']);
  });

  it('runs as written from a global install of the tarball and the SDK, without the registry', async () => {
    const prefix = join(packDir, 'global');
    sh(
      'npm',
      [
        'install',
        '-g',
        '--prefix',
        prefix,
        '--no-audit',
        '--no-fund',
        '--prefer-offline',
        tarballPath,
        peers['@modelcontextprotocol/sdk'] ?? '',
      ],
      packDir,
    );
    const entry = config?.mcpServers.shop;
    if (entry === undefined) throw new Error('the README has no shop entry');
    const dir = mkdtempSync(join(packDir, 'desktop-'));
    const empty = mkdtempSync(join(packDir, 'empty-'));
    // Only the installed path, the data dir and the upstream are the user's own; the rest is as written.
    const args = entry.args.map((a) => (a === '/Users/me/.loopguard' ? join(dir, 'data') : a));
    const sep = args.indexOf('--');
    expect(args.slice(sep + 1)).toEqual(['node', '/Users/me/shop-server.mjs']);
    const upstream = [process.execPath, join(fixtures, 'mcp-upstream.mjs'), dir];
    const client = new Client({ name: 'desktop', version: '1' });
    await client.connect(
      new StdioClientTransport({
        command: join(prefix, 'bin', 'loopguard'),
        args: [...args.slice(0, sep + 1), ...upstream],
        cwd: empty,
        env: {
          ...(process.env as Record<string, string>),
          PATH: [join(prefix, 'bin'), dirname(process.execPath), process.env.PATH].join(':'),
          npm_config_prefix: prefix,
          // Unreachable: nothing may be fetched.
          npm_config_registry: 'http://127.0.0.1:9/',
        },
        stderr: 'ignore',
      }),
    );
    expect((await client.listTools()).tools.map((t) => t.name).slice(0, 2)).toEqual(['search', 'pay']);
    const r = await client.callTool({ name: 'search', arguments: { q: 'x' } });
    expect(r.content).toEqual([{ type: 'text', text: 'no document matches "x"' }]);
    await client.close();
  }, 180_000);
});
