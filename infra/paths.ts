/**
 * Where the local test infrastructure keeps its files. Everything lives under the repo's
 * `.infra/` (git-ignored): `cache/` holds downloaded jars (kept across runs), `run/<id>/`
 * holds one started pair's configs and logs (kept when a start fails, for diagnosis).
 */
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Repository root: this file sits in `<root>/infra/`. */
export const repoRoot: string = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const infraDir: string = join(repoRoot, 'infra');
export const cacheDir: string = join(repoRoot, '.infra', 'cache');
export const runRoot: string = join(repoRoot, '.infra', 'run');
/** Written by `infra:up`, read by `infra:down`. */
export const currentStateFile: string = join(runRoot, 'current.json');
