/**
 * Partition snapshots on the real broker: a worker commits snapshots of its partitions' runs with
 * its batches, the pointer rides in the offset commit, and a worker that takes a partition over
 * loads the snapshot and the runs records after it. What it loads equals the fold of the whole
 * partition, run for run (states, heads, latest answers), and it decides on from there: a run
 * whose first identical calls came before the snapshot is still stopped at sameCallLimit, and a
 * request published again gets the decision it got before the snapshot.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_POLICY, diceSimilarity } from '../src/domain/index.js';
import { KafkaRunStream } from '../src/log/kafka/kafka-run-stream.js';
import { systemClock } from '../src/machines/index.js';
import { nodeHashing } from '../src/runtime/node-hashing.js';
import { GuardWorker } from '../src/service/guard-worker.js';
import { loadPartition } from '../src/service/load-partition.js';
import { PartitionRuns, type RunsContext } from '../src/service/partition-runs.js';
import { PartitionSnapshots } from '../src/service/partition-snapshots.js';
import { emptyRequest, SERVICE_TOPICS, type WireRequest } from '../src/service/service-topics.js';
import { inProcessService } from './support/service/in-process-service.js';
import { SERVICE_SECRET_KEY } from './support/service/serve-process.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

const PARTITIONS = 6;

describe('loopguard serve: partition snapshots', () => {
  it('a takeover loads snapshot + tail, equal to the fold of the whole partition, and decides on from it', async () => {
    const log: string[] = [];
    const svc = await inProcessService('snap', cleanups, {
      snapshotEveryRecords: 8,
      onLog: (line) => log.push(line),
    });
    const { guard, conn } = svc;
    const group = `g-${svc.topicPrefix}`;
    const request = (runId: string, type: WireRequest['type'], fields: Partial<WireRequest> = {}) =>
      guard.request({ ...emptyRequest(guard.newRequestId(), runId, type, guard.now()), ...fields });

    // Twelve runs paging through results (every answer new), and one that repeats a search twice.
    const runs = Array.from({ length: 12 }, (_, i) => `agent-${i}`);
    await Promise.all(
      runs.map(async (runId) => {
        const run = await guard.startRun({ runId });
        for (let page = 0; page < 4; page++)
          await run.call({ tool: 'list', args: { page } }, () => ({ page, items: [`${runId}-${page}`] }));
      }),
    );
    const looper = await guard.startRun({ runId: 'looper' });
    for (let i = 0; i < 2; i++)
      expect((await looper.call({ tool: 'search', args: { q: 'x' } }, () => ({ hits: [] }))).status).toBe(
        'executed',
      );
    // A large result, cached as the side effect's outcome, makes the snapshot span several pieces.
    const big = 'x'.repeat(200_000);
    const payer = await guard.startRun({ runId: 'payer' });
    for (let n = 0; n < 4; n++)
      await payer.call(
        { tool: 'charge', args: { n }, operationKey: `charge-${n}`, sideEffect: true },
        () => ({
          n,
          receipt: big,
        }),
      );
    const asked = {
      ...emptyRequest('repeat-me', 'agent-0', 'TOOL_CALL', guard.now()),
      tool: 'list',
      args_json: '{"page":9}',
    };
    const before = await guard.request(asked);
    expect(before.decision).toBe('execute');
    await request('agent-0', 'TOOL_RESULT', { call_id: 'repeat-me', result_json: '{"page":9}' });
    // Records after the last snapshot: the tail a takeover must fold.
    await request('agent-1', 'TOOL_CALL', { tool: 'list', args_json: '{"page":10}' });
    expect(svc.worker.stats.snapshots).toBeGreaterThan(0);
    await svc.worker.stop();

    // What each partition's committed pointer names, loaded both ways.
    const admin = conn.log.kafka.admin();
    await admin.connect();
    cleanups.push(() => admin.disconnect());
    const stream = new KafkaRunStream(conn.events, conn.log);
    cleanups.push(() => stream.close());
    const ctx: RunsContext = {
      log: conn.log,
      admin,
      events: conn.events,
      stream,
      deps: { hashing: nodeHashing(SERVICE_SECRET_KEY), similarity: diceSimilarity },
      clock: systemClock,
      timeoutMs: 60_000,
    };
    const snapshots = await PartitionSnapshots.open(
      conn.log,
      conn.schemaStore,
      conn.events.subjectFor,
      60_000,
    );
    const committed = await admin.fetchOffsets({
      groupId: group,
      topics: [conn.log.physicalName(SERVICE_TOPICS.requests)],
    });
    let compared = 0;
    let multiPiece = false;
    for (let p = 0; p < PARTITIONS; p++) {
      const at = committed[0]?.partitions.find((x) => x.partition === p);
      const full = await PartitionRuns.load(ctx, p);
      const { runs: fromSnap, pointer } = await loadPartition(ctx, snapshots, group, p, at?.metadata);
      if (pointer === null) continue;
      multiPiece ||= pointer.pieces > 1;
      expect(fromSnap.held()).toEqual(full.held());
      expect(fromSnap.loaded.snapshot).toBe(pointer.id);
      expect(fromSnap.loaded.runsRead).toBeLessThan(full.loaded.runsRead);
      compared++;
    }
    expect(compared).toBeGreaterThan(2);
    expect(multiPiece).toBe(true);

    // Another worker takes every partition over from the snapshots.
    const next = await GuardWorker.start({
      ...conn,
      policy: DEFAULT_POLICY,
      secretKey: SERVICE_SECRET_KEY,
      groupId: group,
      workerId: 'w-next',
      snapshotEveryRecords: 8,
      onLog: (line) => log.push(line),
    });
    cleanups.push(() => next.stop());
    const again = await guard.request(asked);
    expect(again).toEqual(before);
    let ran = false;
    const third = await looper.call({ tool: 'search', args: { q: 'x' } }, () => {
      ran = true;
      return { hits: [] };
    });
    expect(ran).toBe(false);
    expect(third).toMatchObject({ rule: 'exact_repeat' });
    expect(log.filter((l) => l.startsWith('w-next:') && / from snapshot /.test(l)).length).toBeGreaterThan(0);
  }, 180_000);
});
