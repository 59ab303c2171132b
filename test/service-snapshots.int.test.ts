/**
 * Partition snapshots on the real broker: a worker commits snapshots of its partitions' runs with
 * its batches, the pointer rides in the offset commit, and a worker that takes a partition over
 * loads the snapshot and the runs records after it. What it loads equals the fold of the whole
 * partition, run for run (states, heads, latest answers), and it decides on from there: a run
 * whose first identical calls came before the snapshot is still stopped at sameCallLimit, and a
 * request published again gets the decision it got before the snapshot.
 */
import { ConfigResourceTypes } from 'kafkajs';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_POLICY } from '../src/domain/index.js';
import { TOPICS } from '../src/log/event-log.js';
import { GuardWorker } from '../src/service/guard-worker.js';
import { loadPartition } from '../src/service/load-partition.js';
import { PartitionRuns } from '../src/service/partition-runs.js';
import type { HeldRun } from '../src/service/partition-snapshots.js';
import { openRunsContext } from '../src/service/runs-context.js';
import { emptyRequest, SERVICE_TOPICS, type WireRequest } from '../src/service/service-topics.js';
import { inProcessService } from './support/service/in-process-service.js';
import { SERVICE_SECRET_KEY } from './support/service/serve-process.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

const PARTITIONS = 6;

/** A worker that snapshots every batch and puts ended runs aside after a minute of its clock. */
async function puttingAside(label: string) {
  let now = Date.now();
  const clock = {
    now: () => now,
    advance: (ms: number) => {
      now += ms;
    },
  };
  const svc = await inProcessService(label, cleanups, {
    snapshotEveryRecords: 1,
    endedRunsIdleMs: 60_000,
    clock,
  });
  const req = (runId: string, type: WireRequest['type'], fields: Partial<WireRequest> = {}) => ({
    ...emptyRequest(svc.guard.newRequestId(), runId, type, svc.guard.now()),
    ...fields,
  });
  return { svc, clock, req };
}

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
    // Names where user keys meet plain objects: as run ids, tool names and argument keys.
    const hostile = ['__proto__', 'constructor', 'toString', 'run/with/slashes', 'ünï €', 'x'.repeat(1000)];
    for (const runId of hostile) {
      const run = await guard.startRun({ runId });
      for (let n = 0; n < 2; n++)
        await run.call(
          { tool: runId.slice(0, 40), args: JSON.parse(`{"__proto__":${n},"constructor":"c"}`) },
          () => ({
            ['__proto__']: n,
          }),
        );
    }
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
    const opened = await openRunsContext(conn, { group, secretKey: SERVICE_SECRET_KEY });
    cleanups.push(() => opened.close());
    const { ctx } = opened;
    const committed = await ctx.admin.fetchOffsets({
      groupId: group,
      topics: [conn.log.physicalName(SERVICE_TOPICS.requests)],
    });
    let compared = 0;
    let multiPiece = false;
    const snapshotted: string[] = [];
    for (let p = 0; p < PARTITIONS; p++) {
      const at = committed[0]?.partitions.find((x) => x.partition === p);
      const full = await PartitionRuns.load(ctx, p);
      const { runs: fromSnap, pointer } = await loadPartition(ctx, p, at?.metadata);
      if (pointer === null) continue;
      snapshotted.push(...fromSnap.held().map((r) => r.runId));
      multiPiece ||= pointer.pieces > 1;
      expect(fromSnap.held()).toEqual(full.held());
      expect(fromSnap.loaded.snapshot).toBe(pointer.id);
      expect(fromSnap.loaded.runsRead).toBeLessThan(full.loaded.runsRead);
      compared++;
    }
    expect(compared).toBeGreaterThan(2);
    expect(multiPiece).toBe(true);
    expect(snapshotted.filter((id) => hostile.includes(id)).length).toBeGreaterThan(2);

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

  it('puts ended runs aside after a while idle and reads them back when asked again, also after a takeover', async () => {
    const { svc, clock, req } = await puttingAside('aside');
    const { guard, conn } = svc;
    const group = `g-${svc.topicPrefix}`;
    const search = (runId: string) => req(runId, 'TOOL_CALL', { tool: 'search', args_json: '{"q":"same"}' });

    // looper ends stopped by the guard, done ends completed, live goes on.
    await guard.request(req('looper', 'START_RUN'));
    for (let i = 0; i < 2; i++) {
      const call = await guard.request(search('looper'));
      await guard.request(
        req('looper', 'TOOL_RESULT', { call_id: call.request_id, result_json: '{"hits":0}' }),
      );
    }
    const stopping = search('looper');
    const stopped = await guard.request(stopping);
    expect(stopped).toMatchObject({
      decision: 'stop_partial',
      rule: 'exact_repeat',
      status: 'STOPPED_LOOP_GUARD',
    });
    await guard.request(req('done', 'START_RUN'));
    const finishing = req('done', 'FINISH', { verified: true });
    const finished = await guard.request(finishing);
    expect(finished.status).toBe('COMPLETED');
    // A live run in each of their partitions: a partition is snapshotted when it writes.
    const partitionOf = (id: string) => conn.log.partitionOfKey(TOPICS.runs, id);
    const live: string[] = [];
    for (const ended of ['looper', 'done']) {
      let i = 0;
      while ((await partitionOf(`live-${i}`)) !== (await partitionOf(ended))) i++;
      live.push(`live-${i}`);
      await guard.request(req(`live-${i}`, 'START_RUN'));
    }

    // Idle past the limit: the next snapshot (the live runs' next calls write it) puts the ended two aside.
    clock.advance(61_000);
    for (const id of live) {
      const call = await guard.request(req(id, 'TOOL_CALL', { tool: 'list', args_json: '{"page":1}' }));
      expect(call.decision).toBe('execute');
    }
    const where = async () => {
      const opened = await openRunsContext(conn, { group, secretKey: SERVICE_SECRET_KEY });
      try {
        const committed = await opened.ctx.admin.fetchOffsets({
          groupId: group,
          topics: [conn.log.physicalName(SERVICE_TOPICS.requests)],
        });
        const held: string[] = [];
        const aside: string[] = [];
        for (let p = 0; p < PARTITIONS; p++) {
          const at = committed[0]?.partitions.find((x) => x.partition === p);
          const { runs } = await loadPartition(opened.ctx, p, at?.metadata);
          held.push(...runs.held().map((r) => r.runId));
          aside.push(...runs.endedRuns().map((r) => r.runId));
          // Put aside or not, every run is what the fold of the whole partition says it is.
          const full = await PartitionRuns.load(opened.ctx, p);
          const readBack = await Promise.all(
            runs.endedRuns().map((r) => opened.ctx.snapshots.readEnded(r, group, p)),
          );
          const all = [...runs.held(), ...(readBack as HeldRun[])].sort((a, b) =>
            a.runId.localeCompare(b.runId),
          );
          expect(all).toEqual(full.held());
        }
        return { held: held.sort(), aside: aside.sort() };
      } finally {
        await opened.close();
      }
    };
    expect(await where()).toEqual({ held: [...new Set(live)].sort(), aside: ['done', 'looper'] });

    // Another worker takes over (snapshotting rarely, so what follows stays in the tail). Asked
    // again: a repeat gets its decision back, the stopped run stays stopped, and the ended one
    // cannot be started again.
    await svc.worker.stop();
    const takeOver = async (workerId: string) => {
      const w = await GuardWorker.start({
        ...conn,
        clock,
        endedRunsIdleMs: 60_000,
        snapshotEveryRecords: 1_000,
        secretKey: SERVICE_SECRET_KEY,
        groupId: group,
        workerId,
      });
      cleanups.push(() => w.stop());
      return w;
    };
    const second = await takeOver('w-second');
    expect(await guard.request(stopping)).toEqual(stopped);
    expect(await guard.request(search('looper'))).toMatchObject({
      decision: 'refuse',
      rule: 'run_stopped',
      status: 'STOPPED_LOOP_GUARD',
    });
    expect(await guard.request(req('done', 'START_RUN'))).toMatchObject({
      decision: 'error',
      error_code: 'run_exists',
    });
    await second.stop();

    // looper's new records are a tail after the snapshot that has it aside: a load reads its
    // record back and folds the tail onto it (where() compares with the full fold again).
    expect(await where()).toEqual({ held: [...new Set([...live, 'looper'])].sort(), aside: ['done'] });
    await takeOver('w-third');
    expect(await guard.request(finishing)).toEqual(finished);
    expect(await guard.request(stopping)).toEqual(stopped);
    // A resume needs the whole state (the report, the rule that stopped it): it moved with the run.
    expect(
      await guard.request(
        req('looper', 'RESUME', { precondition_change: 'a new index', approved_by: 'ops' }),
      ),
    ).toMatchObject({ decision: 'recorded', status: 'RUNNING' });
    expect(
      await guard.request(req('looper', 'TOOL_CALL', { tool: 'search', args_json: '{"q":"other"}' })),
    ).toMatchObject({ decision: 'execute' });
  }, 180_000);

  it('loads an ended run from its stream when its own record is gone', async () => {
    const { svc, clock, req } = await puttingAside('gone');
    const { guard, conn } = svc;
    await guard.request(req('done', 'START_RUN'));
    const finished = await guard.request(req('done', 'FINISH', { verified: true }));
    let i = 0;
    const partitionOf = (id: string) => conn.log.partitionOfKey(TOPICS.runs, id);
    while ((await partitionOf(`live-${i}`)) !== (await partitionOf('done'))) i++;
    await guard.request(req(`live-${i}`, 'START_RUN'));
    clock.advance(61_000);
    await guard.request(req(`live-${i}`, 'TOOL_CALL', { tool: 'list', args_json: '{"page":1}' }));

    expect(svc.worker.stats.putAside).toBe(1);
    // Every record of the snapshots topic deleted: the run's own record with them.
    const topic = conn.log.physicalName(SERVICE_TOPICS.snapshots);
    const admin = conn.log.kafka.admin();
    await admin.connect();
    cleanups.push(() => admin.disconnect());
    const [end] = await admin.fetchTopicOffsets(topic);
    expect(Number(end?.high)).toBeGreaterThan(0);
    // A compacted topic refuses DeleteRecords; a topic with delete retention accepts it.
    await admin.alterConfigs({
      validateOnly: false,
      resources: [
        {
          type: ConfigResourceTypes.TOPIC,
          name: topic,
          configEntries: [{ name: 'cleanup.policy', value: 'delete' }],
        },
      ],
    });
    await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: String(end?.high) }] });

    // Its state comes from its stream: still completed, not a fresh run.
    expect(await guard.request(req('done', 'START_RUN'))).toMatchObject({
      decision: 'error',
      error_code: 'run_exists',
      status: 'COMPLETED',
      seq: finished.seq,
    });
  }, 120_000);
});
