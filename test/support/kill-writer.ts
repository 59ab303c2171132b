/**
 * A writer process killed in the middle of its work: `node --import tsx SCRIPT ...args`, SIGKILLed
 * once it has printed `lines` complete lines (each an acknowledged write) and `thenMs` more have
 * passed, or after `withinMs` whatever it printed. Resolves with what it printed and its signal.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');

export interface KilledWriter {
  readonly signal: NodeJS.Signals | null;
  readonly out: string;
  readonly err: string;
}

export async function killWriterAfter(
  script: string,
  args: readonly string[],
  opts: { readonly lines: number; readonly withinMs: number; readonly thenMs?: number },
): Promise<KilledWriter> {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const exited = new Promise<NodeJS.Signals | null>((r) => child.on('exit', (_c, sig) => r(sig)));
  const started = Date.now();
  while ((out.match(/\n/g)?.length ?? 0) < opts.lines && Date.now() - started < opts.withinMs)
    await new Promise((r) => setTimeout(r, 20));
  if (opts.thenMs !== undefined) await new Promise((r) => setTimeout(r, opts.thenMs));
  child.kill('SIGKILL');
  const signal = await exited;
  return { signal, out, err };
}
