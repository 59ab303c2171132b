/**
 * Where the local test infrastructure keeps its files. Everything lives under the repo's
 * `.infra/` (git-ignored): `cache/` holds downloaded jars (kept across runs), `run/<id>/`
 * holds one started pair's configs and logs (kept when a start fails, for diagnosis).
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Repository root: the nearest folder above this file that holds `infra/pom.xml`. This file runs
 * from `<root>/infra/` (tsx) and from `<root>/.bench-dist/infra/` (the compiled benchmarks).
 */
function findRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'infra', 'pom.xml'))) return dir;
    if (dirname(dir) === dir) return resolve(from, '..');
  }
}

export const repoRoot: string = findRoot(dirname(fileURLToPath(import.meta.url)));
export const infraDir: string = join(repoRoot, 'infra');
export const cacheDir: string = join(repoRoot, '.infra', 'cache');
export const runRoot: string = join(repoRoot, '.infra', 'run');
/** Written by `infra:up`, read by `infra:down` (and by the benchmarks, to find the broker's process). */
export const currentStateFile: string = join(runRoot, 'current.json');

/**
 * The mark on the command line of every process a run starts, so a recorded pid can be confirmed
 * to still be ours before it is stopped or measured (a pid may have been reused).
 */
export function runMarker(runDir: string): string {
  return `-Dloopguard.infra.run=${runDir}`;
}
