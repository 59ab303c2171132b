/**
 * One guard worker and one remote client in the test process, on topics of their own: the
 * set-up of the service tests that need no worker process of their own (no SIGKILL, no restart).
 */
import { randomUUID } from 'node:crypto';
import { createRemoteGuard, type RemoteGuard, type RemoteGuardOptions } from '../../../src/client/index.js';
import { GuardWorker, type GuardWorkerOptions } from '../../../src/service/guard-worker.js';
import { openService, type ServiceConnection } from '../../../src/service/open-service.js';
import { kafkaEnv } from '../../setup/kafka-env.js';
import { SERVICE_SECRET_KEY } from './serve-process.js';

export interface InProcessService {
  readonly topicPrefix: string;
  readonly conn: ServiceConnection;
  readonly worker: GuardWorker;
  readonly guard: RemoteGuard;
}

/** Starts both; everything started is handed to `cleanups` (the caller runs them in reverse). */
export async function inProcessService(
  label: string,
  cleanups: Array<() => Promise<void>>,
  worker: Partial<
    Pick<GuardWorkerOptions, 'policy' | 'snapshotEveryRecords' | 'endedRunsIdleMs' | 'clock' | 'onLog'>
  > = {},
  client: Partial<Pick<RemoteGuardOptions, 'timeoutMs' | 'resends'>> = {},
): Promise<InProcessService> {
  const { brokers, registryUrl } = kafkaEnv();
  const topicPrefix = `${label}-${randomUUID().slice(0, 8)}.`;
  const conn = await openService({ brokers, registryUrl, topicPrefix });
  cleanups.push(() => conn.close());
  const started = await GuardWorker.start({
    ...conn,
    ...worker,
    secretKey: SERVICE_SECRET_KEY,
    groupId: `g-${topicPrefix}`,
    workerId: `w-${label}`,
  });
  cleanups.push(() => started.stop());
  const guard = await remoteClient(topicPrefix, cleanups, client);
  return { topicPrefix, conn, worker: started, guard };
}

/** A remote client of the service on `topicPrefix` (30 s timeout unless `opts` says), closed by `cleanups`. */
export async function remoteClient(
  topicPrefix: string,
  cleanups: Array<() => Promise<void>>,
  opts: Partial<Pick<RemoteGuardOptions, 'timeoutMs' | 'resends' | 'credentials'>> = {},
): Promise<RemoteGuard> {
  const { brokers, registryUrl } = kafkaEnv();
  const guard = await createRemoteGuard({
    secretKey: SERVICE_SECRET_KEY,
    brokers,
    registry: registryUrl,
    topicPrefix,
    timeoutMs: 30_000,
    ...opts,
  });
  cleanups.push(() => guard.close());
  return guard;
}
