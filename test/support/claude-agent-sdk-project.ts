import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FakeBlock, MessagesRequest } from './fake-messages-api.js';
import { sh } from './sh.js';

/**
 * The Claude Agent SDK as a user installs it, for the tests and the example: its package carries
 * the ~400 MB Claude Code binary, so it is no devDependency of loopguard (CI would install it on
 * every run); it is installed once under `.infra/cache/claude-agent-sdk-<version>` (into a temp
 * folder renamed into place, so an interrupted install is never taken for a finished one) and
 * linked into each temp project beside the packed loopguard tarball.
 */
export const CLAUDE_AGENT_SDK_VERSION = '0.3.333';
const root = join(import.meta.dirname, '..', '..');
const cache = join(root, '.infra', 'cache', `claude-agent-sdk-${CLAUDE_AGENT_SDK_VERSION}`);

/** The cached install's node_modules, installed first if it is not there. */
export function cachedClaudeAgentSdk(): string {
  const modules = join(cache, 'node_modules');
  if (existsSync(join(cache, 'installed'))) return modules;
  mkdirSync(join(root, '.infra', 'cache'), { recursive: true });
  const tmp = mkdtempSync(`${cache}.tmp-`);
  writeFileSync(join(tmp, 'package.json'), JSON.stringify({ name: 'claude-agent-sdk-cache', private: true }));
  sh(
    'npm',
    [
      'install',
      '--no-audit',
      '--no-fund',
      '--prefer-offline',
      `@anthropic-ai/claude-agent-sdk@${CLAUDE_AGENT_SDK_VERSION}`,
      // The SDK's peers, at the versions loopguard itself uses.
      'zod@4.6.7',
      '@modelcontextprotocol/sdk@1.32.2',
    ],
    tmp,
  );
  writeFileSync(join(tmp, 'installed'), `${new Date().toISOString()}\n`);
  try {
    renameSync(tmp, cache);
  } catch (e) {
    // Another process finished first: its install is as good as this one.
    rmSync(tmp, { recursive: true, force: true });
    if (!existsSync(join(cache, 'installed'))) throw e;
  }
  return modules;
}

/**
 * A temp project as a user has it: the packed loopguard tarball installed, the SDK linked from
 * the cache.
 */
export function claudeAgentProject(): { readonly dir: string; readonly cleanup: () => void } {
  const modules = cachedClaudeAgentSdk();
  const dir = mkdtempSync(join(tmpdir(), 'lg-claude-agent-'));
  sh('npm', ['pack', '--silent', '--pack-destination', dir], root);
  const tarball = readdirSync(dir).find((f) => f.endsWith('.tgz'));
  if (tarball === undefined) throw new Error(`npm pack left no tarball in ${dir}`);
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'uses-loopguard-claude', private: true, type: 'module' }),
  );
  sh(
    'npm',
    ['install', '--no-audit', '--no-fund', '--prefer-offline', '--omit=optional', `./${tarball}`],
    dir,
  );
  mkdirSync(join(dir, 'node_modules', '@anthropic-ai'), { recursive: true });
  symlinkSync(
    join(modules, '@anthropic-ai', 'claude-agent-sdk'),
    join(dir, 'node_modules', '@anthropic-ai', 'claude-agent-sdk'),
    'dir',
  );
  // zod comes with loopguard's MCP SDK; a project without it takes the cache's.
  if (!existsSync(join(dir, 'node_modules', 'zod')))
    symlinkSync(join(modules, 'zod'), join(dir, 'node_modules', 'zod'), 'dir');
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * The environment for the Claude Code binary against the fake API: no key of anyone's, its
 * config and transcripts in a folder of the test's own, nothing sent on the side.
 */
export const fakeModelEnv = (url: string, configDir: string): NodeJS.ProcessEnv => ({
  ...process.env,
  ANTHROPIC_BASE_URL: url,
  ANTHROPIC_API_KEY: 'not-a-key',
  CLAUDE_CONFIG_DIR: configDir,
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
});

/** The command the looping model runs again and again; each real run adds a line to the log. */
export const BASH_CHECK = { command: 'echo checked >> bash-runs.log', description: 'Check the refund log' };

/**
 * The model of the example's scene: pays for order A1 twice, then asks for the same Bash command
 * on every turn it gets.
 */
export const loopingClaude = (turn: number): readonly FakeBlock[] =>
  turn < 2
    ? [
        {
          type: 'tool_use',
          id: `toolu_charge_${turn}`,
          name: 'mcp__shop__charge_card',
          input: { order: 'A1', amount: 30 },
        },
      ]
    : [{ type: 'tool_use', id: `toolu_bash_${turn}`, name: 'Bash', input: BASH_CHECK }];

type ContentBlock = { type?: string; content?: unknown; is_error?: boolean };

/** The tool results a request carries, as the model reads them (text and error flag). */
export function toolResults(
  req: MessagesRequest | undefined,
): { readonly text: string; readonly isError: boolean }[] {
  const messages = req?.messages ?? [];
  // After the model's last turn; a hook's note may follow the results in a message of its own.
  return messages
    .slice(messages.findLastIndex((m) => m.role === 'assistant') + 1)
    .flatMap((m) => (Array.isArray(m.content) ? (m.content as ContentBlock[]) : []))
    .filter((b) => b.type === 'tool_result')
    .map((b) => ({
      text: typeof b.content === 'string' ? b.content : JSON.stringify(b.content),
      isError: b.is_error === true,
    }));
}
