/**
 * `replay` holds one trace file's runs at a time, never the corpus's: 96 MiB of trace files
 * (twelve of 8 MiB, each far within the limits) replay in a 96 MB heap. Before 2026-12-03 every
 * file was parsed before the first run was replayed, which took more than 128 MB here and, on a
 * corpus of sixteen 100 MiB files, ran out of heap at 4.3 GB.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { tempDirs } from './support/cli-run.js';

const tmp = tempDirs('lg-replay-mem-');
const run = promisify(execFile);
const FILES = 12;
const FILE_BYTES = 8 * 1024 * 1024;

/** A file of runs of four reads, each answering a distinct 6 KB page. */
function traceFile(path: string, f: number): number {
  const lines: string[] = [];
  let bytes = 0;
  for (let n = 0; bytes < FILE_BYTES; n++) {
    const calls = [0, 1, 2, 3].map((i) => ({
      step: i + 1,
      tool: 'read',
      args: { page: i },
      result: `${f}-${n}-${i}-${'x'.repeat(6000)}`,
      result_sha256: `${f}-${n}-${i}`,
    }));
    const line = JSON.stringify({ run_id: `f${f}-r${n}`, outcome: { success: true }, calls });
    lines.push(line);
    bytes += line.length + 1;
  }
  writeFileSync(path, `${lines.join('\n')}\n`);
  return lines.length;
}

it('replays trace files one at a time, in a heap smaller than the files together', {
  timeout: 240_000,
}, async () => {
  const dir = tmp();
  const files = Array.from({ length: FILES }, (_, f) => join(dir, `t${f}.jsonl`));
  const runs = files.reduce((n, path, f) => n + traceFile(path, f), 0);
  // A heap too small for the corpus: an abort (exit 134) rejects with what it printed.
  const { stdout: out, stderr: err } = await run(
    process.execPath,
    [
      '--max-old-space-size=96',
      '--import',
      'tsx',
      'src/cli/main.ts',
      'replay',
      ...files,
      '--data-dir',
      join(dir, 'data'),
    ],
    { cwd: join(import.meta.dirname, '..'), maxBuffer: 1 << 24 },
  );
  expect(err).toBe('');
  expect(out).toContain(`runs ${runs}; stopped by the guard 0; calls executed ${runs * 4} of ${runs * 4}`);
});
