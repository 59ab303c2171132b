import { hostname } from 'node:os';
import { GuardWorker } from '../service/guard-worker.js';
import { openService } from '../service/open-service.js';
import { readTenantKeys } from '../service/tenant-keys.js';
import { untilAborted } from './command-context.js';
import type { Io } from './io.js';
import type { KafkaConfig } from './kafka-config.js';
import { type MetricsServer, serviceMetrics, startMetricsServer } from './metrics-server.js';
import { readPolicyFile } from './policy-file.js';

export interface ServeFlags {
  readonly group?: string;
  readonly 'metrics-port'?: number;
  readonly 'session-timeout-ms'?: number;
  readonly partitions?: number;
  readonly policy?: string;
  readonly 'snapshot-every'?: number;
  readonly 'ended-idle-ms'?: number;
  readonly 'from-beginning'?: boolean;
  readonly 'tenant-keys'?: string;
}

export const DEFAULT_SERVE_GROUP = 'loopguard-serve';

/**
 * `loopguard serve --kafka [--group G] [--metrics-port P] [--snapshot-every N] [--ended-idle-ms MS]`:
 * one guard worker; start as many as there are partitions to share, on any machines, with the
 * same group. Runs until the signal.
 */
export async function serveCommand(
  cfg: KafkaConfig,
  flags: ServeFlags,
  io: Io,
  signal: AbortSignal,
): Promise<number> {
  const policy = readPolicyFile(flags.policy).policy;
  const { partitions, 'metrics-port': metricsPort, 'session-timeout-ms': sessionTimeoutMs } = flags;
  const { 'snapshot-every': snapshotEveryRecords, 'ended-idle-ms': endedRunsIdleMs } = flags;
  const groupId = flags.group ?? DEFAULT_SERVE_GROUP;
  // Read before anything starts: a bad key file is a usage error, not a worker that trusts everyone.
  const tenantKeys = flags['tenant-keys'] === undefined ? undefined : readTenantKeys(flags['tenant-keys']);
  const conn = await openService({ ...cfg, ...(partitions ? { partitions } : {}) });
  let metrics: MetricsServer | undefined;
  try {
    const registry = serviceMetrics();
    const worker = await GuardWorker.start({
      ...conn,
      metrics: registry,
      groupId,
      policy,
      workerId: `${hostname()}/${process.pid}`,
      ...(sessionTimeoutMs ? { sessionTimeoutMs } : {}),
      ...(snapshotEveryRecords !== undefined ? { snapshotEveryRecords } : {}),
      ...(endedRunsIdleMs !== undefined ? { endedRunsIdleMs } : {}),
      fromBeginning: flags['from-beginning'] === true,
      ...(tenantKeys ? { tenantKeys } : {}),
      onLog: (line) => io.err(`serve: ${line}`),
    });
    // All interfaces: a worker in a container is scraped from outside it.
    if (metricsPort !== undefined) {
      metrics = await startMetricsServer(registry, metricsPort, '0.0.0.0');
      // With port 0 the port is known only now; say which it is.
      io.err(`serve: metrics on ${metrics.url}`);
    }
    io.err(`serve: ${worker.workerId} in group ${groupId} on ${conn.log.physicalName('loopguard.requests')}`);
    await untilAborted(signal);
    await worker.stop();
    io.err(`serve: stopped after ${worker.stats.decided} decisions`);
    return 0;
  } finally {
    await metrics?.close();
    await conn.close();
  }
}
