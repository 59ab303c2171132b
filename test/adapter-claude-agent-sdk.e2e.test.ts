import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BASH_CHECK,
  claudeAgentProject,
  fakeModelEnv,
  loopingClaude,
  toolResults,
} from './support/claude-agent-sdk-project.js';
import { type FakeBlock, type FakeMessagesApi, startFakeMessagesApi } from './support/fake-messages-api.js';

/**
 * The real Claude Agent SDK (its Claude Code binary) in a temp project with the packed package,
 * against a fake Messages API on 127.0.0.1 that plays the model. The SDK comes from the cache
 * under `.infra/cache` (installed there on first use: about 400 MB, a minute or two).
 */
const root = join(import.meta.dirname, '..');
let project: ReturnType<typeof claudeAgentProject>;
let config: string;
let api: FakeMessagesApi | undefined;

beforeAll(() => {
  project = claudeAgentProject();
  config = mkdtempSync(join(tmpdir(), 'lg-claude-config-'));
  copyFileSync(join(root, 'examples', 'claude-agent-sdk.ts'), join(project.dir, 'example.ts'));
  copyFileSync(
    join(root, 'test', 'fixtures', 'installed', 'claude-agent-sdk-permissions.ts'),
    join(project.dir, 'permissions.ts'),
  );
  copyFileSync(
    join(root, 'test', 'fixtures', 'installed', 'claude-agent-sdk-abort.ts'),
    join(project.dir, 'abort.ts'),
  );
}, 600_000);
afterAll(async () => {
  await api?.close();
  project?.cleanup();
  if (config) rmSync(config, { recursive: true, force: true });
}, 60_000);

/** Runs a file of the project with the fake model; async, since the fake answers from this process. */
async function runWithModel(
  file: string,
  script: (turn: number) => readonly FakeBlock[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ readonly out: string; readonly api: FakeMessagesApi }> {
  await api?.close();
  const fake = await startFakeMessagesApi(script);
  api = fake;
  const child = spawn(process.execPath, [file], {
    cwd: project.dir,
    env: { ...fakeModelEnv(fake.url, config), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const [code] = await once(child, 'exit');
  if (code !== 0) throw new Error(`${file} exited ${code}:\n${out}${err}`);
  return { out, api: fake };
}

/** A call of `loopguard audit --json`'s timeline, as far as the test reads it. */
interface AuditLine {
  readonly kind: string;
  readonly tool: string;
  readonly before: { readonly decision: string } | null;
  readonly result: { readonly kind: string; readonly code: string | null } | null;
}

const bashRuns = () => {
  const log = join(project.dir, 'bash-runs.log');
  return existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean).length : 0;
};

describe('loopguard/claude-agent-sdk with the Claude Code binary', () => {
  it('the example: one charge, the cached one answered, the third identical Bash denied and read by the model, the query ended', async () => {
    const { out, api: fake } = await runWithModel('example.ts', loopingClaude);

    expect(out).toContain('card charged 1 time(s); run STOPPED_LOOP_GUARD (exact_repeat)');
    expect(bashRuns()).toBe(2);
    // Six model turns: two charges, three Bash calls, and the one after the stop, which ended the query.
    expect(fake.turns).toHaveLength(6);
    const [first] = toolResults(fake.turns[1]);
    expect(first).toEqual({ text: expect.stringContaining('"payment_id\\":\\"p-1\\"'), isError: false });
    // The retried payment is answered with the recorded result, not denied.
    const [cached] = toolResults(fake.turns[2]);
    expect(cached?.isError).toBe(false);
    expect(cached?.text).toContain('p-1');
    expect(cached?.text).toContain('[loopguard] Already done: operation acme:charge:A1');
    expect(toolResults(fake.turns[4])).toEqual([{ text: '(Bash completed with no output)', isError: false }]);
    // The third identical command: denied in the SDK's deny shape, and the model reads why.
    const [denied] = toolResults(fake.turns[5]);
    expect(denied?.isError).toBe(true);
    expect(denied?.text).toContain('[loopguard] stopped (exact_repeat)');
    expect(denied?.text).toContain(JSON.stringify(BASH_CHECK.command).slice(1, -1));
    // The call after the stop is denied with continue: false, and the query ends cleanly.
    expect(out).toContain('query ended: success');
    expect(out).toMatch(/\[loopguard\] stopped \(run_stopped\)/);
  }, 120_000);

  it('the SDK keeps its own permissions: canUseTool asked for Write and Bash, the denied Write recorded as not run, a failed Read not a success', async () => {
    const file = (name: string) => join(project.dir, name);
    const script = (turn: number): readonly FakeBlock[] => {
      if (turn === 0)
        return [
          {
            type: 'tool_use',
            id: 'toolu_w',
            name: 'Write',
            input: { file_path: file('report.txt'), content: 'x' },
          },
          { type: 'tool_use', id: 'toolu_b', name: 'Bash', input: BASH_CHECK },
        ];
      if (turn === 1 || turn === 2)
        return [
          { type: 'tool_use', id: `toolu_r${turn}`, name: 'Read', input: { file_path: file('nope.txt') } },
        ];
      return [{ type: 'text', text: 'done' }];
    };
    const before = bashRuns();
    const data = mkdtempSync(join(tmpdir(), 'lg-claude-data-'));
    try {
      const { out, api: fake } = await runWithModel('permissions.ts', script, { LG_DATA_DIR: data });
      const r = JSON.parse(out.trim().split('\n').at(-1) ?? 'null');

      // The guard answered no permission: both calls outside allowedTools went to canUseTool.
      expect(r.asked).toEqual(['Write', 'Bash']);
      expect(existsSync(file('report.txt'))).toBe(false);
      expect(bashRuns()).toBe(before + 1);
      expect(toolResults(fake.turns[1]).map((t) => t.isError)).toEqual([true, false]);
      expect(toolResults(fake.turns[1])[0]?.text).toBe('user says no');
      expect(toolResults(fake.turns[2])).toEqual([
        { text: expect.stringContaining('File does not exist'), isError: true },
      ]);
      // The failed Read was recorded as no success: asked again, it is denied before it runs.
      expect(toolResults(fake.turns[3])).toEqual([
        {
          text: expect.stringMatching(
            /^PreToolUse:Read hook error: \[loopguard\] refused \(precondition_unchanged\)/,
          ),
          isError: true,
        },
      ]);
      expect(fake.turns).toHaveLength(4);
      // The Write the guard allowed and the SDK denied is settled at once, not at the step timeout (120 s).
      expect(r.ms).toBeLessThan(60_000);
      const { stdout } = await promisify(execFile)(
        join(project.dir, 'node_modules', '.bin', 'loopguard'),
        ['audit', 'permissions', '--data-dir', data, '--json'],
        { cwd: project.dir },
      );
      const calls = (JSON.parse(stdout).timeline as AuditLine[]).filter((e) => e.kind === 'call');
      expect(
        calls.map((c) => `${c.tool}:${c.before?.decision}:${c.result?.kind ?? '-'}:${c.result?.code ?? '-'}`),
      ).toEqual([
        'Write:execute:PRECONDITION:not_run',
        'Bash:execute:SUCCESS:-',
        'Read:execute:PRECONDITION:tool_error',
        'Read:refuse:-:-',
      ]);
      expect(r.status).toBe('RUNNING');
      expect(r.last).toBe('result:success');
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  }, 120_000);

  it("the caller's abortController.abort() at 200 ms reaches a slow in-process MCP tool at once, not at its 20 s end", async () => {
    const script = (turn: number): readonly FakeBlock[] =>
      turn === 0
        ? [{ type: 'tool_use', id: 'toolu_s', name: 'mcp__docs__slow_search', input: { q: 'refund policy' } }]
        : [{ type: 'text', text: 'done' }];
    const data = mkdtempSync(join(tmpdir(), 'lg-claude-data-'));
    try {
      const { out, api: fake } = await runWithModel('abort.ts', script, { LG_DATA_DIR: data });
      const r = JSON.parse(out.trim().split('\n').at(-1) ?? 'null');

      expect(r.abortedAfterMs).not.toBeNull();
      expect(r.abortedAfterMs).toBeLessThan(10_000);
      expect(r.sinceStart).toBeLessThan(15_000);
      expect(r.ended).toMatch(/abort/i);
      // The tool's 20 s answer never reaches the model (the binary may still send the call as
      // interrupted, depending on when the abort lands, so only the late answer is checked).
      const results = fake.turns.flatMap((t) => toolResults(t));
      expect(results.filter((t) => t.text.includes('late'))).toEqual([]);
      expect(r.window).toEqual(['mcp__docs__slow_search:RETRYABLE']);
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  }, 120_000);

  it('the README shows the example region as written, and the example type-checks strict against the SDK', async () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const example = readFileSync(join(root, 'examples', 'claude-agent-sdk.ts'), 'utf8');
    const region = /\/\/ readme:start claude-agent-sdk\n([\s\S]*?)\/\/ readme:end claude-agent-sdk\n/.exec(
      example,
    )?.[1];
    expect(region).toBeDefined();
    expect(readme).toContain(region);
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    const flags = [
      '--noEmit',
      // The example's use of the SDK's types is checked; the SDK's own 11,000 lines of declarations are not.
      '--skipLibCheck',
      '--strict',
      '--target',
      'es2022',
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
    ];
    const types = [
      '--allowImportingTsExtensions',
      '--types',
      'node',
      '--typeRoots',
      join(root, 'node_modules', '@types'),
    ];
    await promisify(execFile)(
      process.execPath,
      [tsc, ...flags, ...types, 'example.ts', 'permissions.ts', 'abort.ts'],
      {
        cwd: project.dir,
      },
    ).catch((e: { stdout?: string }) => {
      throw new Error(`tsc failed:\n${e.stdout ?? ''}`);
    });
  }, 300_000);
});
