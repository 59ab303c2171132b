/**
 * Starts a worker as a direct child (`node --import tsx`, not through npx), so that SIGKILL hits
 * the process that holds the claim and its `exit` event says it is really gone.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const WORKER = fileURLToPath(new URL('./worker.ts', import.meta.url));

export interface Worker {
  readonly child: ChildProcess;
  /** Resolves with the first stdout line that starts with `prefix` (rejects if the worker exits first). */
  line(prefix: string): Promise<string>;
  readonly exited: Promise<number | null>;
  readonly stderr: () => string;
  readonly output: () => string;
}

export function spawnWorker(job: unknown): Worker {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER, JSON.stringify(job)], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const listeners: (() => void)[] = [];
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
    for (const l of listeners) l();
  });
  child.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    exited,
    stderr: () => err,
    output: () => out,
    line: (prefix) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const hit = out.split('\n').find((l) => l.startsWith(prefix));
          if (hit !== undefined) resolve(hit.slice(prefix.length).trim());
          return hit !== undefined;
        };
        if (check()) return;
        listeners.push(check);
        void exited.then((code) => {
          if (!check()) reject(new Error(`worker exited (${code}) before "${prefix}": ${err.slice(-2000)}`));
        });
      }),
  };
}
