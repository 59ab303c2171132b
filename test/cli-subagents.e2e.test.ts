import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, tempDirs } from './support/cli-run.js';

const tmp = tempDirs('lg-sub-');

const run = (args: string[]) => runCli(args);

const call = (step: number, q: string) => ({
  step,
  tool: 'search',
  args: { q },
  result: `r-${q}`,
  result_sha256: `sha-${q}`,
  after_user_turn: step === 0,
});

function traces(lines: readonly object[]): string {
  const file = join(tmp(), 'tree.jsonl');
  writeFileSync(file, `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
  return file;
}

describe('parent_run_id in the trace format', () => {
  it('replay records the link; audit, rebuilt from the log, shows the tree', async () => {
    const file = traces([
      { run_id: 'boss', outcome: { success: true }, calls: [call(0, 'plan')] },
      { run_id: 'worker-1', parent_run_id: 'boss', outcome: { success: true }, calls: [call(0, 'a')] },
      { run_id: 'worker-2', parent_run_id: 'boss', outcome: { success: false }, calls: [call(0, 'b')] },
    ]);
    const dataDir = tmp();
    expect((await run(['replay', file, '--data-dir', dataDir])).code).toBe(0);
    const audit = await run(['audit', 'worker-2', '--data-dir', dataDir]);
    expect(audit.code).toBe(0);
    expect(audit.out).toContain(
      ['tree', '  boss  COMPLETED', '    worker-1  COMPLETED', '    worker-2  FAILED  <- this run'].join(
        '\n',
      ),
    );
    const json = JSON.parse((await run(['audit', 'boss', '--data-dir', dataDir, '--json'])).out);
    expect(json.tree).toEqual({
      run_id: 'boss',
      state: 'COMPLETED',
      children: [
        { run_id: 'worker-1', state: 'COMPLETED', children: [] },
        { run_id: 'worker-2', state: 'FAILED', children: [] },
      ],
    });
  });

  it('a run with neither parent nor children prints no tree', async () => {
    const dataDir = tmp();
    await run([
      'replay',
      traces([{ run_id: 'solo', outcome: { success: true }, calls: [call(0, 'x')] }]),
      '--data-dir',
      dataDir,
    ]);
    expect((await run(['audit', 'solo', '--data-dir', dataDir])).out).not.toContain('tree');
  });

  it('rejects a bad parent_run_id naming the field', async () => {
    const file = traces([
      { run_id: 'x', parent_run_id: 7, outcome: { success: true }, calls: [call(0, 'q')] },
    ]);
    const r = await run(['replay', file, '--data-dir', tmp()]);
    expect(r.code).toBe(1);
    expect(r.err).toContain('parent_run_id: expected a non-empty string');
  });
});

describe('eval --synthetic', () => {
  // The whole synthetic evaluation in a child process: seconds alone, more on a shared machine.
  it('scores the synthetic coding-agent runs per harness, apart from any recorded files', async () => {
    const r = await run(['eval', '--synthetic', '--seeds', '11,12']);
    expect(r.code).toBe(0);
    // Each family drawn from both seeds, their runs pooled.
    for (const family of ['shell-only', 'editor-tools', 'json-exec', 'assistant'])
      expect(r.out).toContain(`== synthetic-${family}: 200 runs`);
    // Always beside the one-line rule; on every family no more false stops than it.
    const falseStops = (detector: string) =>
      [...r.out.matchAll(new RegExp(`^${detector} .* (\\d+)/160 \\(`, 'gm'))].map((m) => Number(m[1]));
    const ours = falseStops('loopguard');
    const three = falseStops('3 identical in a row');
    expect(ours).toHaveLength(4);
    expect(three).toHaveLength(4);
    for (const [i, n] of ours.entries()) expect(n).toBeLessThanOrEqual(three[i] ?? 0);
  }, 120_000);
});
