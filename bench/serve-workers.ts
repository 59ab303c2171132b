/**
 * `loopguard serve` worker processes from the compiled CLI, for the service benchmarks: started
 * in one group on a fresh topic prefix, waited on until the group has spread the partitions.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createRemoteGuard, type RemoteGuard } from '../src/client/index.js';
import type { KafkaTarget } from './bench-result.js';

const MAIN = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));

export interface ServeWorker {
  readonly child: ChildProcess;
  readonly pid: number;
  assigned(): number[];
  readonly exited: Promise<number | null>;
}

export const SESSION_TIMEOUT_MS = 6_000;

/** Workers and the bench's client share one key, as a deployment's would. */
export const BENCH_SECRET_KEY = 'bench-serve-key';

/** The bench's client of the workers on `topicPrefix`. */
export function benchGuard(target: KafkaTarget, topicPrefix: string): Promise<RemoteGuard> {
  return createRemoteGuard({
    secretKey: BENCH_SECRET_KEY,
    brokers: target.brokers,
    registry: target.registryUrl,
    topicPrefix,
    timeoutMs: 60_000,
  });
}

function spawnWorker(target: KafkaTarget, prefix: string, partitions: number): ServeWorker {
  const child = spawn(
    process.execPath,
    [
      MAIN,
      'serve',
      '--kafka',
      '--brokers',
      target.brokers.join(','),
      '--registry',
      target.registryUrl,
      '--topic-prefix',
      prefix,
      '--group',
      `bench-${prefix}`,
      '--partitions',
      String(partitions),
      '--session-timeout-ms',
      String(SESSION_TIMEOUT_MS),
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, LOOPGUARD_SECRET_KEY: BENCH_SECRET_KEY } },
  );
  let err = '';
  child.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    pid: child.pid as number,
    exited,
    assigned: () => {
      const last = [...err.matchAll(/assigned partitions \[([0-9,]*)\]/g)].at(-1)?.[1] ?? '';
      return last === '' ? [] : last.split(',').map(Number);
    },
  };
}

/** n workers; the first creates the topics before the others join. */
export async function startWorkers(
  target: KafkaTarget,
  prefix: string,
  n: number,
  partitions: number,
): Promise<ServeWorker[]> {
  const first = spawnWorker(target, prefix, partitions);
  await until(() => first.assigned().length > 0, 60_000, 'first worker assigned');
  const workers = [first, ...Array.from({ length: n - 1 }, () => spawnWorker(target, prefix, partitions))];
  await until(
    () =>
      workers.every((w) => w.assigned().length > 0) &&
      workers.flatMap((w) => w.assigned()).length === partitions,
    60_000,
    `${n} workers sharing ${partitions} partitions`,
  );
  return workers;
}

export async function stopWorkers(workers: readonly ServeWorker[]): Promise<void> {
  for (const w of workers) w.child.kill('SIGTERM');
  await Promise.all(workers.map((w) => w.exited));
}

async function until(ok: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`bench: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
