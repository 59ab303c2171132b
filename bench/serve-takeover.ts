/**
 * What a worker taking a partition over waits for before it decides again, as history grows: the
 * same 100 runs with 10 and with 100 calls each (10x the records), written through a real worker
 * on a one-partition service, which commits snapshots as it goes (default cadence). Then, as a
 * takeover does it: the committed pointer, the snapshot and the runs records after it, loaded
 * into run actors, against folding the whole partition (what a worker without snapshots does),
 * measured on the same partition in the same run. The best of five loads each.
 */
import { randomUUID } from 'node:crypto';
import { DEFAULT_POLICY } from '../src/domain/index.js';
import { GuardWorker } from '../src/service/guard-worker.js';
import { loadPartition } from '../src/service/load-partition.js';
import { openService } from '../src/service/open-service.js';
import { PartitionRuns } from '../src/service/partition-runs.js';
import { openRunsContext } from '../src/service/runs-context.js';
import { SERVICE_TOPICS } from '../src/service/service-topics.js';
import { type Bench, type BenchContext, type KafkaTarget, result } from './bench-result.js';
import { guardTrip } from './guard-trip.js';
import { BENCH_SECRET_KEY, benchGuard } from './serve-workers.js';
import { drive } from './service-load.js';

const RUNS = 100;
const CALLS = 10;
const LOADS = 5;

interface Loads {
  readonly snapshotMs: number;
  readonly fullMs: number;
  readonly records: number;
  readonly tail: number;
}

export const serveTakeoverBench: Bench = {
  name: 'serve-takeover',
  async run(ctx) {
    const target = await ctx.kafka();
    const one = await takeover(ctx, target, 1);
    const ten = await takeover(ctx, target, 10);
    return [
      result('serve-takeover 1x history (snapshot + tail)', 'ms', one.snapshotMs, 'full fold', one.fullMs),
      result('serve-takeover 10x history (snapshot + tail)', 'ms', ten.snapshotMs, 'full fold', ten.fullMs),
      result('serve-takeover growth 1x -> 10x (snapshot + tail)', 'ms', ten.snapshotMs, '1x', one.snapshotMs),
      result('serve-takeover growth 1x -> 10x (full fold)', 'ms', ten.fullMs, '1x', one.fullMs),
    ];
  },
};

async function takeover(ctx: BenchContext, target: KafkaTarget, scale: number): Promise<Loads> {
  const topicPrefix = `bench-takeover-${scale}x-${randomUUID().slice(0, 8)}.`;
  const groupId = `g-${topicPrefix}`;
  const conn = await openService({
    brokers: target.brokers,
    registryUrl: target.registryUrl,
    topicPrefix,
    partitions: 1,
  });
  try {
    const worker = await GuardWorker.start({
      ...conn,
      secretKey: BENCH_SECRET_KEY,
      groupId,
      policy: { ...DEFAULT_POLICY, maxSteps: null, maxToolCalls: null },
    });
    const guard = await benchGuard(target, topicPrefix);
    try {
      await drive(guardTrip(guard, new Map()), RUNS, 1 + 2 * CALLS * scale, `run-${scale}x`);
    } finally {
      await guard.close();
      await worker.stop();
    }
    return await timeLoads(ctx, conn, groupId, scale);
  } finally {
    await conn.close();
  }
}

async function timeLoads(
  ctx: BenchContext,
  conn: Awaited<ReturnType<typeof openService>>,
  groupId: string,
  scale: number,
): Promise<Loads> {
  const opened = await openRunsContext(conn, {
    group: groupId,
    secretKey: BENCH_SECRET_KEY,
    timeoutMs: 120_000,
  });
  const runs = opened.ctx;
  try {
    const requests = conn.log.physicalName(SERVICE_TOPICS.requests);
    let [snapshotMs, fullMs, records, tail] = [Infinity, Infinity, 0, 0];
    for (let i = 0; i < LOADS; i++) {
      let t = performance.now();
      const offsets = await runs.admin.fetchOffsets({ groupId, topics: [requests] });
      const metadata = offsets[0]?.partitions.find((p) => p.partition === 0)?.metadata;
      const { runs: fromSnap, pointer } = await loadPartition(runs, 0, metadata);
      if (pointer === null) throw new Error('bench: the takeover found no usable snapshot');
      snapshotMs = Math.min(snapshotMs, performance.now() - t);
      t = performance.now();
      const full = await PartitionRuns.load(runs, 0);
      fullMs = Math.min(fullMs, performance.now() - t);
      if (fromSnap.size !== RUNS || full.size !== RUNS) throw new Error('bench: a load lost runs');
      [records, tail] = [full.loaded.runsRead, fromSnap.loaded.runsRead];
    }
    ctx.log(
      `bench: takeover at ${scale}x: ${records} runs records; snapshot + ${tail} records ${snapshotMs.toFixed(1)} ms, full fold ${fullMs.toFixed(1)} ms`,
    );
    return { snapshotMs, fullMs, records, tail };
  } finally {
    await opened.close();
  }
}
