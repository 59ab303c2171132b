/**
 * Starts a throwaway Apicurio Registry (Quarkus fast-jar, in-memory storage) on 127.0.0.1 and
 * exposes its Confluent-compatible API. Ready once `GET <ccompat>/subjects` answers 200.
 */
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { ensureApicurio } from './fetch.js';
import { runMarker } from './paths.js';
import { freePorts } from './ports.js';
import { killGroup, spawnDetached, waitUntil } from './proc.js';

/** Path of the Confluent-compatible API; clients take `http://host:port` + this as "host". */
export const CCOMPAT_PATH = '/apis/ccompat/v7';

export interface RegistryNode {
  pid: number;
  /** `http://127.0.0.1:<port>/apis/ccompat/v7`, the value for SCHEMA_REGISTRY_URL. */
  url: string;
  logFile: string;
  version: string;
  /** Present only in the process that started it. */
  child?: ChildProcess;
}

export interface StartRegistryOptions {
  /** `.infra/run/<id>`: `registry.log` goes here. */
  runDir: string;
  readyTimeoutMs?: number;
}

/** One round trip against a Confluent-compatible registry URL; throws unless it answers 200. */
export async function registryAnswers(url: string, timeoutMs = 5_000): Promise<void> {
  const res = await fetch(`${url.replace(/\/+$/, '')}/subjects`, { signal: AbortSignal.timeout(timeoutMs) });
  await res.body?.cancel();
  if (res.status !== 200) throw new Error(`GET ${url}/subjects answered ${res.status}`);
}

export async function startRegistry(opts: StartRegistryOptions): Promise<RegistryNode> {
  const dist = await ensureApicurio();
  const [httpPort, managementPort] = (await freePorts(2)) as [number, number];
  const logFile = join(opts.runDir, 'registry.log');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    QUARKUS_HTTP_HOST: '127.0.0.1',
    QUARKUS_HTTP_PORT: String(httpPort),
    QUARKUS_MANAGEMENT_HOST: '127.0.0.1',
    QUARKUS_MANAGEMENT_PORT: String(managementPort),
    // In-memory H2 is the default of both 2.6 and 3.x; stated for 3.x so that a developer's
    // environment cannot point it elsewhere.
    APICURIO_STORAGE_KIND: 'sql',
    APICURIO_STORAGE_SQL_KIND: 'h2',
  };
  const args = [
    '-Xms128m',
    '-Xmx512m',
    '-Djava.awt.headless=true',
    runMarker(opts.runDir),
    // Vert.x would otherwise leave a cache folder in /tmp.
    `-Dvertx.cacheDirBase=${join(opts.runDir, 'vertx-cache')}`,
    '-jar',
    dist.jar,
  ];
  // cwd = runDir: Quarkus may write scratch files to its working directory.
  const child = spawnDetached(dist.java, args, { cwd: opts.runDir, logFile, env });
  if (child.pid === undefined) throw new Error('could not spawn java for Apicurio Registry');
  const url = `http://127.0.0.1:${httpPort}${CCOMPAT_PATH}`;
  try {
    await waitUntil(
      async () => {
        await registryAnswers(url, 3_000);
        return true;
      },
      {
        what: `Apicurio Registry ${dist.version} at ${url}`,
        timeoutMs: opts.readyTimeoutMs ?? 120_000,
        intervalMs: 500,
        child,
        logFile,
      },
    );
  } catch (err) {
    await killGroup(child.pid);
    throw err;
  }
  return { pid: child.pid, url, logFile, version: dist.version, child };
}
