/**
 * Names and reasons come from agents, upstream servers and clients: ESC, OSC, BEL, NUL and C1
 * controls in them are shown escaped in every human output, never sent to the terminal raw.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { escapeControls } from '../src/cli/escape-controls.js';
import { runCli, runCliAsProcess, tempDirs } from './support/cli-run.js';

const tmp = tempDirs('lg-cli-esc-');
// An OSC 52 clipboard write, BEL, NUL and a C1 CSI in the run id; a screen clear in the tool name.
const RUN = 'evil\u001b]52;c;aGk=\u0007run\u0000x\u009b';
const TOOL = 'se\u001b[2Jarch';
// biome-ignore lint/suspicious/noControlCharactersInRegex: looking for raw control characters.
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

function hostileTrace(): string {
  const dir = tmp();
  const file = join(dir, 'hostile.jsonl');
  const calls = [0, 1, 2].map((step) => ({
    step,
    tool: TOOL,
    args: { q: 'a' },
    result: 'none',
    result_sha256: 'h1',
    after_user_turn: step === 0,
  }));
  writeFileSync(file, `${JSON.stringify({ run_id: RUN, outcome: { success: false }, calls })}\n`);
  return file;
}

describe('terminal control characters in human output', () => {
  it('escapes them and keeps newlines and tabs', () => {
    expect(escapeControls(`a\u001b[31mb\u0007c\u0000d\u009be\r\n\tf\u007f`)).toBe(
      'a\\u001b[31mb\\u0007c\\u0000d\\u009be\\u000d\n\tf\\u007f',
    );
  });

  it('replay, stops, audit, rebuild and whatif print them escaped', async () => {
    const data = join(tmp(), 'data');
    const trace = hostileTrace();
    const outputs = [
      await runCli(['replay', trace, '--data-dir', data]),
      await runCli(['stops', '--data-dir', data]),
      await runCli(['audit', RUN, '--data-dir', data]),
      await runCli(['rebuild', '--data-dir', data]),
      await runCli([
        'whatif',
        '--policy',
        join(import.meta.dirname, '..', 'examples', 'policy.json'),
        '--data-dir',
        data,
      ]),
      await runCliAsProcess(['audit', `${RUN}-missing`, '--data-dir', data]),
    ];
    for (const o of outputs) {
      expect(o.out).not.toMatch(RAW);
      expect(o.err).not.toMatch(RAW);
    }
    const [replay, stops, audit] = outputs;
    expect(replay?.out).toContain('evil\\u001b]52;c;aGk=\\u0007run\\u0000x\\u009b');
    expect(stops?.out).toContain('se\\u001b[2Jarch');
    expect(audit?.out).toContain('se\\u001b[2Jarch');
    expect(outputs[5]?.err).toContain('loopguard: unknown_run: audit: no run evil\\u001b]52');
  });

  it('--json output keeps the exact names (JSON escapes them itself)', async () => {
    const data = join(tmp(), 'data');
    const r = await runCli(['replay', hostileTrace(), '--data-dir', data, '--json']);
    expect(r.out).not.toMatch(RAW);
    expect(JSON.parse(r.out).run_id).toBe(RUN);
  });
});
