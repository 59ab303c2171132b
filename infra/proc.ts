/**
 * Process helpers shared by the Kafka and registry launchers: detached spawning with output
 * to a log file, readiness polling that fails fast when the process dies, log tails for error
 * messages, and killing exactly one recorded process group.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

export interface SpawnOptions {
  cwd: string;
  logFile: string;
  env?: NodeJS.ProcessEnv;
}

/**
 * Starts `cmd` as the leader of a new process group (`detached`), so it outlives the script
 * that started it (`infra:up`) and can be killed as a group (`kill -PGID`) with any children.
 * stdout and stderr go to `logFile` (appended) rather than pipes, which would block the child
 * once nobody reads them.
 */
export function spawnDetached(cmd: string, args: string[], opts: SpawnOptions): ChildProcess {
  const fd = openSync(opts.logFile, 'a');
  try {
    const child = spawn(cmd, args, {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      detached: true,
      stdio: ['ignore', fd, fd],
    });
    child.unref(); // do not keep the caller's event loop alive
    return child;
  } finally {
    closeSync(fd); // the child holds its own copy
  }
}

/** Runs a short command to completion, output appended to `logFile`; rejects on non-zero exit. */
export async function runToCompletion(cmd: string, args: string[], opts: SpawnOptions): Promise<void> {
  const fd = openSync(opts.logFile, 'a');
  try {
    const child = spawn(cmd, args, {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      stdio: ['ignore', fd, fd],
    });
    const code = await new Promise<number | null>((res, rej) => {
      child.once('error', rej);
      child.once('exit', (c) => res(c));
    });
    if (code !== 0)
      throw new Error(`${cmd} ${args.join(' ')} exited with ${code}\n${tailFile(opts.logFile)}`);
  } finally {
    closeSync(fd);
  }
}

/** Last `lines` lines of a log file, indented, for error messages. */
export function tailFile(path: string, lines = 40): string {
  if (!existsSync(path)) return `  (no log at ${path})`;
  const all = readFileSync(path, 'utf8').trimEnd().split('\n');
  return [
    `  --- last ${Math.min(lines, all.length)} lines of ${path} ---`,
    ...all.slice(-lines).map((l) => `  ${l}`),
  ].join('\n');
}

export interface WaitOptions {
  what: string;
  timeoutMs: number;
  intervalMs?: number;
  /** If this process exits while waiting, fail at once instead of running out the clock. */
  child?: ChildProcess;
  logFile?: string;
}

/** Polls `probe` until it resolves true; throws with the log tail on timeout or child exit. */
export async function waitUntil(probe: () => Promise<boolean>, opts: WaitOptions): Promise<void> {
  const deadline = Date.now() + opts.timeoutMs;
  let exited: string | undefined;
  const onExit = (code: number | null, signal: NodeJS.Signals | null): void => {
    exited = `exited (code ${code}, signal ${signal})`;
  };
  opts.child?.once('exit', onExit);
  let lastError = '';
  try {
    while (Date.now() < deadline) {
      if (exited === undefined) {
        try {
          if (await probe()) return;
        } catch (err) {
          lastError = err instanceof Error ? err.message : String(err);
        }
      }
      if (exited !== undefined) break;
      await sleep(opts.intervalMs ?? 500);
    }
    const why =
      exited ?? `not ready after ${opts.timeoutMs} ms${lastError ? ` (last error: ${lastError})` : ''}`;
    throw new Error(`${opts.what} ${why}${opts.logFile ? `\n${tailFile(opts.logFile)}` : ''}`);
  } finally {
    opts.child?.off('exit', onExit);
  }
}

/**
 * The fields of `/proc/<pid>/stat` after the command name (state first, then ppid, ...; utime and
 * stime are the 12th and 13th): the name may hold spaces and parentheses, so they start after the
 * last ") ". Throws where there is no /proc.
 */
export function procStatFields(pid: number): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
}

/** True while `pid` exists and is not a zombie (a zombie cannot be killed, only reaped). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return procStatFields(pid)[0] !== 'Z';
  } catch {
    return true; // no /proc (not Linux): trust kill(0)
  }
}

/** Whether `pid`'s command line contains `marker`: guards against killing a reused pid. */
export function commandLineContains(pid: number, marker: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker);
  } catch {
    return false;
  }
}

/**
 * Stops the process group led by `pid`: SIGTERM, then SIGKILL after `graceMs`. Test data is
 * thrown away afterwards, so a clean Kafka shutdown is nice but not needed.
 */
export async function killGroup(pid: number, graceMs = 5_000): Promise<void> {
  const signal = (sig: NodeJS.Signals): void => {
    try {
      process.kill(-pid, sig);
    } catch {
      /* already gone */
    }
  };
  if (!isAlive(pid)) return;
  signal('SIGTERM');
  const deadline = Date.now() + graceMs;
  while (isAlive(pid) && Date.now() < deadline) await sleep(100);
  if (isAlive(pid)) {
    signal('SIGKILL');
    const hardDeadline = Date.now() + 5_000;
    while (isAlive(pid) && Date.now() < hardDeadline) await sleep(50);
  }
}
