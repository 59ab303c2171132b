/**
 * `loopguard serve` as a real child process (`node --import tsx`, not through npx), so SIGKILL
 * hits the worker itself. Its stderr log says which partitions it was assigned and when it has
 * fenced and loaded one, which is what the failover tests wait on.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { kafkaEnv } from '../../setup/kafka-env.js';

const MAIN = join(import.meta.dirname, '..', '..', '..', 'src', 'cli', 'main.ts');

/** The key every worker and client of a test shares (a shared log requires one). */
export const SERVICE_SECRET_KEY = 'service-test-key';

export interface ServeOptions {
  readonly brokers: readonly string[];
  readonly registryUrl: string;
  readonly topicPrefix: string;
  readonly group: string;
  readonly sessionTimeoutMs?: number;
  readonly partitions?: number;
  readonly metricsPort?: number;
  /** `--snapshot-every`: runs records between a partition's snapshots. */
  readonly snapshotEvery?: number;
  /** `--tenant-keys`: the path of a tenant keys file. */
  readonly tenantKeys?: string;
}

export interface ServeProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** The partitions of its latest assignment ([] before the first). */
  assigned(): number[];
  /** Resolves once the log has a line matching `pattern` (rejects if the process exits first). */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
  log(): string;
  readonly exited: Promise<number | null>;
}

export function spawnServe(opts: ServeOptions): ServeProcess {
  const args = [
    '--import',
    'tsx',
    MAIN,
    'serve',
    '--kafka',
    '--brokers',
    opts.brokers.join(','),
    '--registry',
    opts.registryUrl,
    '--topic-prefix',
    opts.topicPrefix,
    '--group',
    opts.group,
    '--session-timeout-ms',
    String(opts.sessionTimeoutMs ?? 6_000),
    '--partitions',
    String(opts.partitions ?? 6),
    ...(opts.metricsPort === undefined ? [] : ['--metrics-port', String(opts.metricsPort)]),
    ...(opts.snapshotEvery === undefined ? [] : ['--snapshot-every', String(opts.snapshotEvery)]),
    ...(opts.tenantKeys === undefined ? [] : ['--tenant-keys', opts.tenantKeys]),
  ];
  const child = spawn(process.execPath, args, {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, LOOPGUARD_SECRET_KEY: SERVICE_SECRET_KEY },
  });
  let err = '';
  const listeners = new Set<() => void>();
  child.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
    for (const l of listeners) l();
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    pid: child.pid as number,
    exited,
    log: () => err,
    assigned: () => {
      const all = [...err.matchAll(/assigned partitions \[([0-9,]*)\]/g)];
      const last = all.at(-1)?.[1] ?? '';
      return last === '' ? [] : last.split(',').map(Number);
    },
    waitFor: (pattern, timeoutMs = 60_000) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => done(new Error(`no ${pattern} within ${timeoutMs} ms:\n${err.slice(-2000)}`)),
          timeoutMs,
        );
        const check = () => {
          if (pattern.test(err)) done();
        };
        const done = (e?: Error) => {
          clearTimeout(timer);
          listeners.delete(check);
          if (e) reject(e);
          else resolve();
        };
        listeners.add(check);
        void exited.then((code) =>
          done(new Error(`serve exited (${code}) before ${pattern}:\n${err.slice(-2000)}`)),
        );
        check();
      }),
  };
}

/** Waits until the workers' latest assignments cover `partitions` partitions, each worker some. */
export async function balanced(
  workers: readonly ServeProcess[],
  partitions: number,
  timeoutMs = 60_000,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const sets = workers.map((w) => w.assigned());
    const all = new Set(sets.flat());
    if (all.size === partitions && sets.every((s) => s.length > 0) && sets.flat().length === partitions)
      return;
    if (Date.now() > until)
      throw new Error(
        `workers not balanced: ${JSON.stringify(sets)}\n${workers.map((w) => w.log().slice(-1000)).join('\n---\n')}`,
      );
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * Worker processes of one group on topics of their own: `start()` spawns one more, and each is
 * SIGKILLed by `cleanups` (SIGCONT first, so a stopped one dies too).
 */
export function serveGroup(label: string, cleanups: Array<() => Promise<void>>) {
  const { brokers, registryUrl } = kafkaEnv();
  const prefix = `${label}-${randomUUID().slice(0, 8)}.`;
  const group = `g-${prefix}`;
  const start = (): ServeProcess => {
    const w = spawnServe({ brokers, registryUrl, topicPrefix: prefix, group });
    cleanups.push(async () => {
      w.child.kill('SIGCONT');
      w.child.kill('SIGKILL');
      await w.exited;
    });
    return w;
  };
  return { brokers, registryUrl, prefix, group, start };
}
