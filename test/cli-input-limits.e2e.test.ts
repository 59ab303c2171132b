/**
 * Every input file is read as a stream with a limit per line and per file: `/dev/zero` given as a
 * trace or a policy fails at once with `too_large` naming the file (and the line), instead of
 * filling memory; the lines before a too-large one are kept.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readTraceFiles } from '../src/cli/trace-files.js';
import { runCli, tempDirs } from './support/cli-run.js';

const tmp = tempDirs('lg-cli-limits-');
const run = (id: string) =>
  JSON.stringify({
    run_id: id,
    outcome: { success: true },
    calls: [
      { step: 0, tool: 'search', args: { q: id }, result: 'x', result_sha256: 'h', after_user_turn: true },
    ],
  });

describe('input size limits', () => {
  it('replay /dev/zero fails fast with too_large naming the file and line', async () => {
    const started = performance.now();
    const r = await runCli(['replay', '/dev/zero', '--data-dir', join(tmp(), 'data')]);
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(r.code).toBe(1);
    expect(r.err).toContain('/dev/zero:1: the line is over 16 MiB (too_large)');
  });

  it('eval /dev/zero and whatif --policy /dev/zero fail fast too', async () => {
    const ev = await runCli(['eval', '/dev/zero', '--json']);
    expect(ev.code).toBe(1);
    expect(ev.err).toContain('/dev/zero:1: the line is over 16 MiB (too_large)');
    const data = join(tmp(), 'data');
    const trace = join(tmp(), 'one.jsonl');
    writeFileSync(trace, `${run('a')}\n`);
    expect((await runCli(['replay', trace, '--data-dir', data])).code).toBe(0);
    await expect(runCli(['whatif', '--policy', '/dev/zero', '--data-dir', data])).rejects.toMatchObject({
      code: 'too_large',
      message: '--policy /dev/zero: over 1024 KiB: not a policy file',
    });
  });

  it('a line over the limit ends the file there, naming the line; the lines before it stay', () => {
    const file = join(tmp(), 'long.jsonl');
    writeFileSync(file, `${run('a')}\n${run('b')}\n${'x'.repeat(5000)}\n${run('c')}\n`);
    const { files, errors } = readTraceFiles([file], { lineBytes: 1000, fileBytes: 1 << 20 });
    expect(files[0]?.runs.map((r) => r.run_id)).toEqual(['a', 'b']);
    expect(errors.map((e) => [e.code, e.message])).toEqual([
      ['too_large', `${file}:3: the line is over ${1000 / (1024 * 1024)} MiB (too_large)`],
    ]);
  });

  it('a file over the limit is refused, naming the file; a line across read chunks stays whole', () => {
    const file = join(tmp(), 'big.jsonl');
    const lines = Array.from({ length: 3000 }, (_, i) => run(`r${i}`));
    writeFileSync(file, `${lines.join('\n')}\n`);
    const whole = readTraceFiles([file]);
    expect([whole.errors, whole.files[0]?.runs.length]).toEqual([[], 3000]);
    const capped = readTraceFiles([file], { lineBytes: 1 << 20, fileBytes: 64 * 1024 });
    expect(capped.errors.map((e) => e.code)).toEqual(['too_large']);
    expect(capped.errors[0]?.message).toBe(`${file}: over 0.0625 MiB: not a trace file (too_large)`);
  });
});
