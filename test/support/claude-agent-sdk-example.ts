/**
 * `npm run example:claude-agent-sdk`: examples/claude-agent-sdk.ts in a temp project (the packed
 * package, the SDK from the cache), with the looping fake model on 127.0.0.1 as its Messages API.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { claudeAgentProject, fakeModelEnv, loopingClaude } from './claude-agent-sdk-project.js';
import { startFakeMessagesApi } from './fake-messages-api.js';

const project = claudeAgentProject();
const api = await startFakeMessagesApi(loopingClaude);
const config = mkdtempSync(join(tmpdir(), 'lg-claude-config-'));
try {
  copyFileSync(
    join(import.meta.dirname, '..', '..', 'examples', 'claude-agent-sdk.ts'),
    join(project.dir, 'example.ts'),
  );
  // Not a sync spawn: the fake model answers from this process's event loop.
  const child = spawn(process.execPath, ['example.ts'], {
    cwd: project.dir,
    env: fakeModelEnv(api.url, config),
    stdio: 'inherit',
  });
  const [code] = await once(child, 'exit');
  process.exitCode = code ?? 1;
} finally {
  await api.close();
  rmSync(config, { recursive: true, force: true });
  project.cleanup();
}
