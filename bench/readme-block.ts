/**
 * `--readme NAME`: the README's generated block `<!-- bench:NAME -->` ... `<!-- /bench:NAME -->`
 * is replaced by this run's table, so the README's figures are one command away from a rerun.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '../infra/paths.js';

export function replaceReadmeBlock(name: string, body: string): void {
  const path = join(repoRoot, 'README.md');
  const text = readFileSync(path, 'utf8');
  const open = `<!-- bench:${name} -->`;
  const close = `<!-- /bench:${name} -->`;
  const start = text.indexOf(open);
  const end = text.indexOf(close);
  if (start < 0 || end < start) throw new Error(`README.md has no block ${open} ... ${close}`);
  writeFileSync(path, `${text.slice(0, start + open.length)}\n${body}${text.slice(end)}`);
}

/** When and where the figures were measured: what a reader needs to judge them. */
export function provenance(loadBefore: readonly number[]): string {
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: repoRoot,
      encoding: 'utf8',
    }).trim();
  } catch {
    // not a git checkout (an unpacked tarball): the date and the machine still say when
  }
  const load = (l: readonly number[]) => l.map((x) => x.toFixed(2)).join(' / ');
  return (
    `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, commit ${commit}, Node ${process.version}, ` +
    `load average (1 / 5 / 15 min) ${load(loadBefore)} before, ${load(loadavg())} after`
  );
}
