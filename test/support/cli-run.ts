/**
 * What the CLI end-to-end tests share: running `loopguard` in-process with its output captured,
 * and temporary directories removed after each test.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { cli, main } from '../../src/cli/main.js';
import { captureIo } from './capture-io.js';

/** Runs the command; `env` replaces process.env for it when given (KAFKA_BROKERS and the like). */
export async function runCli(args: string[], env?: Record<string, string | undefined>) {
  const io = captureIo();
  const code = await main(args, io, env === undefined ? {} : { env });
  return { code, out: io.stdout(), err: io.stderr() };
}

/** Runs the command as the process does: an error is its printed line and exit code, not a throw. */
export async function runCliAsProcess(args: string[], env: Record<string, string | undefined> = {}) {
  const io = captureIo();
  const code = await cli(args, io, { env });
  return { code, out: io.stdout(), err: io.stderr() };
}

/** A maker of fresh temporary directories (`prefix`...), each removed after the test that made it. */
export function tempDirs(prefix: string): () => string {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  return () => {
    const d = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(d);
    return d;
  };
}
