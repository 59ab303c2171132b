import { execFileSync } from 'node:child_process';

/** Runs a command; on failure, the error says what it printed (tsc's diagnostics are on stdout). */
export const sh = (cmd: string, args: string[], cwd: string): string => {
  try {
    return execFileSync(cmd, args, {
      cwd,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      maxBuffer: 1 << 26,
    });
  } catch (e) {
    const { stdout, stderr } = e as { stdout?: string; stderr?: string };
    throw new Error(`${cmd} ${args.join(' ')} failed:\n${stdout ?? ''}${stderr ?? ''}`);
  }
};
