/**
 * A Python virtualenv with the Python example's requirements, for the test that runs it: created
 * under `.infra/cache/python-venv` on first use (PyPI), reused while the requirements file is
 * unchanged. Python 3.9+ with the venv module is needed; nothing else is assumed of the machine.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { cacheDir, repoRoot } from './paths.js';

const run = promisify(execFile);

export const PYTHON_REQUIREMENTS = join(repoRoot, 'examples', 'python', 'requirements.txt');

/** The venv's python executable, with the requirements installed. */
export async function pythonWithRequirements(requirements = PYTHON_REQUIREMENTS): Promise<string> {
  const venv = join(cacheDir, 'python-venv');
  const python = join(venv, 'bin', 'python');
  const stamp = join(venv, 'requirements.txt');
  const wanted = readFileSync(requirements, 'utf8');
  if (existsSync(python) && existsSync(stamp) && readFileSync(stamp, 'utf8') === wanted) return python;
  const system = process.env.LOOPGUARD_PYTHON ?? 'python3';
  await run(system, ['-m', 'venv', '--clear', venv]);
  await run(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '-r', requirements], {
    maxBuffer: 16 * 1024 * 1024,
  });
  writeFileSync(stamp, wanted);
  return python;
}
