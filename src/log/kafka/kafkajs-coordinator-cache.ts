/**
 * A contained fix of kafkajs 2.2.4's coordinator lookups, applied to the one method at fault, on
 * the class kafkajs itself loads (never by editing node_modules).
 *
 * kafkajs sends a FindCoordinator request every time it needs a coordinator: a transaction's first
 * send to a partition, its `sendOffsets` (twice) and its commit each look it up again, a round trip
 * a `serve` worker's decision waits for. The Java client keeps the coordinator until a request to
 * it fails; here a lookup is kept for COORDINATOR_TTL_MS, and dropped whenever kafkajs refreshes
 * the cluster's metadata (as it does on a broker or coordinator error), so a coordinator that moved
 * is found again within a second, while kafkajs's own retries run.
 */
import { oncePerProcess } from './kafkajs-request-queue.js';

/** How long a coordinator found is reused: short, so a moved coordinator costs retries briefly. */
export const COORDINATOR_TTL_MS = 1_000;

interface CoordinatorMetadata {
  readonly coordinator: { readonly nodeId: number };
}

interface ClusterInternals {
  findGroupCoordinatorMetadata(q: {
    groupId: string;
    coordinatorType?: number;
  }): Promise<CoordinatorMetadata>;
  refreshMetadata(): Promise<void>;
  /** The cache, per cluster (kafkajs makes one per client). */
  loopguardCoordinators?: Map<string, { readonly at: number; readonly found: CoordinatorMetadata }>;
}

/** Wraps the lookup. */
export const cacheKafkajsCoordinators = oncePerProcess((require) => {
  const Cluster = require('kafkajs/src/cluster/index.js') as { prototype: ClusterInternals };
  const find = Cluster.prototype.findGroupCoordinatorMetadata;
  const refresh = Cluster.prototype.refreshMetadata;
  if (typeof find !== 'function' || typeof refresh !== 'function') return false;
  Cluster.prototype.findGroupCoordinatorMetadata = async function (this: ClusterInternals, q) {
    this.loopguardCoordinators ??= new Map();
    const key = `${q.coordinatorType ?? 0}/${q.groupId}`;
    const kept = this.loopguardCoordinators.get(key);
    if (kept !== undefined && Date.now() - kept.at < COORDINATOR_TTL_MS) return kept.found;
    const found = await find.call(this, q);
    this.loopguardCoordinators.set(key, { at: Date.now(), found });
    return found;
  };
  Cluster.prototype.refreshMetadata = async function (this: ClusterInternals) {
    this.loopguardCoordinators?.clear();
    return refresh.call(this);
  };
  return true;
});
