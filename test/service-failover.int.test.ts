/**
 * The guard as a service on the real broker: three `loopguard serve` processes in one consumer
 * group, 200 runs at once through createRemoteGuard, one worker SIGKILLed under load. Every
 * request gets exactly one decision, a run whose first identical calls the killed worker decided
 * is still stopped at sameCallLimit by its new owner (state moved, not reset), no side effect runs
 * twice, and a rebuild of the runs topic says what the clients saw. The workers snapshot their
 * partitions every few batches, so the survivors take the killed worker's partitions over from a
 * snapshot and the runs records after it (a snapshot in the killed worker's open transaction is
 * aborted with it).
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createRemoteGuard, type RemoteGuard, type RemoteRun } from '../src/client/index.js';
import type { CallResult } from '../src/runtime/index.js';
import { kafkaEnv } from './setup/kafka-env.js';
import { rebuiltRuns } from './support/service/rebuilt-runs.js';
import {
  balanced,
  SERVICE_SECRET_KEY,
  type ServeProcess,
  spawnServe,
} from './support/service/serve-process.js';
import { decisionCounts, readServiceTopics } from './support/service/service-topics-read.js';

const RUNS = 200;
/** About one snapshot per batch or two: each partition holds about 33 runs. */
const SNAPSHOT_EVERY = 40;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

function startWorker(topicPrefix: string, group: string): ServeProcess {
  const { brokers, registryUrl } = kafkaEnv();
  const w = spawnServe({ brokers, registryUrl, topicPrefix, group, snapshotEvery: SNAPSHOT_EVERY });
  cleanups.push(async () => {
    w.child.kill('SIGKILL');
    await w.exited;
  });
  return w;
}

/** The first creates the topics; the others join once it is in the group. */
async function startWorkers(n: number, topicPrefix: string, group: string): Promise<ServeProcess[]> {
  const first = startWorker(topicPrefix, group);
  await first.waitFor(/ in group /);
  return [first, ...Array.from({ length: n - 1 }, () => startWorker(topicPrefix, group))];
}

async function remoteGuard(topicPrefix: string): Promise<RemoteGuard> {
  const { brokers, registryUrl } = kafkaEnv();
  // Long enough to ride out a failover (session timeout + reload), short enough to fail a hang.
  const guard = await createRemoteGuard({
    secretKey: SERVICE_SECRET_KEY,
    brokers,
    registry: registryUrl,
    topicPrefix,
    timeoutMs: 60_000,
  });
  cleanups.push(() => guard.close());
  return guard;
}

describe('loopguard serve: three workers, one SIGKILLed under load', () => {
  it('answers every request exactly once and moves run state to the new owner', async () => {
    const prefix = `svc-${randomUUID().slice(0, 8)}.`;
    const workers = await startWorkers(3, prefix, `g-${prefix}`);
    await balanced(workers, 6);
    const guard = await remoteGuard(prefix);
    const charged = new Map<string, number>();
    const charge = (key: string) => () => {
      charged.set(key, (charged.get(key) ?? 0) + 1);
      return { charged: key };
    };
    const search = () => 'no results';
    const ids = Array.from({ length: RUNS }, (_, i) => `run-${i}`);
    const runs = new Map<string, RemoteRun>();
    const results = new Map<string, CallResult[]>(ids.map((id) => [id, []]));

    // Before the kill: every run starts, pages through a list, charges once and makes its first
    // two identical calls (new pages are new information, so they come first).
    await Promise.all(
      ids.map(async (id) => {
        const run = await guard.startRun({ runId: id });
        runs.set(id, run);
        const own = results.get(id) as CallResult[];
        for (let page = 1; page <= 3; page++)
          own.push(await run.call({ tool: 'list', args: { page } }, () => ({ page, items: [page] })));
        own.push(
          await run.call(
            { tool: 'charge', args: { id }, operationKey: `op-${id}`, sideEffect: true },
            charge(`op-${id}`),
          ),
        );
        for (let k = 0; k < 2; k++) own.push(await run.call({ tool: 'search', args: { q: 'same' } }, search));
      }),
    );

    // Under load: every run repeats the charge and the identical search at once; the worker
    // with the most partitions is killed once a fifth of the runs are under way.
    const victim = workers.reduce((a, b) => (b.assigned().length > a.assigned().length ? b : a));
    const victimPartitions = victim.assigned();
    let underWay = 0;
    let killedAt = 0;
    /** Where each worker's log stood at the kill: the takeovers after it are what counts. */
    const logBefore = new Map<ServeProcess, number>();
    const kill = new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (underWay < RUNS / 5) return;
        clearInterval(check);
        killedAt = Date.now();
        for (const w of workers) logBefore.set(w, w.log().length);
        victim.child.kill('SIGKILL');
        resolve();
      }, 5);
    });
    await Promise.all([
      kill,
      ...ids.map(async (id) => {
        const run = runs.get(id) as RemoteRun;
        const own = results.get(id) as CallResult[];
        own.push(
          await run.call(
            { tool: 'charge', args: { id }, operationKey: `op-${id}`, sideEffect: true },
            charge(`op-${id}`),
          ),
        );
        underWay++;
        own.push(await run.call({ tool: 'search', args: { q: 'same' } }, search));
      }),
    ]);
    expect(await victim.exited).toBeNull();
    const took = Date.now() - killedAt;

    // No side effect twice: each charge ran once, the repeat came back cached.
    expect([...charged.values()].every((n) => n === 1)).toBe(true);
    expect(charged.size).toBe(RUNS);
    for (const id of ids) {
      const own = results.get(id) as CallResult[];
      expect(own.map((r) => r.status)).toEqual([
        'executed',
        'executed',
        'executed',
        'executed',
        'executed',
        'executed',
        'cached',
        'stopped',
      ]);
      expect(own.at(-1)).toMatchObject({ status: 'stopped', rule: 'exact_repeat' });
    }

    // Exactly one decision per request on the decisions topic (read_committed).
    const { brokers, registryUrl } = kafkaEnv();
    const topics = await readServiceTopics(brokers, registryUrl, prefix);
    const counts = decisionCounts(topics);
    expect(topics.requests.length).toBe(RUNS * 15);
    expect([...counts.values()].filter((n) => n !== 1)).toEqual([]);

    // State moved, not reset: runs whose first identical calls the killed worker decided were
    // stopped at the third by another worker.
    const victimId = topics.decisions.find(
      (d) => victimPartitions.length > 0 && d.worker.endsWith(`/${victim.pid}`),
    )?.worker;
    expect(victimId).toBeDefined();
    const moved = ids.filter((id) => {
      const mine = topics.decisions.filter((d) => d.run_id === id);
      const first = mine.find((d) => d.decision === 'execute');
      const last = mine.at(-1);
      return first?.worker === victimId && last?.worker !== victimId && last?.rule === 'exact_repeat';
    });
    expect(moved.length).toBeGreaterThan(0);
    // The survivors loaded the killed worker's partitions from snapshots.
    const survivors = workers.filter((w) => w !== victim);
    for (const p of victimPartitions) {
      const loads = survivors.flatMap((w) =>
        [
          ...w
            .log()
            .slice(logBefore.get(w) ?? 0)
            .matchAll(
              new RegExp(`partition ${p}: fenced, \\d+ runs loaded in \\d+ ms from (.*), from offset`, 'g'),
            ),
        ].map((m) => m[1] as string),
      );
      expect(loads.length, `partition ${p} taken over`).toBeGreaterThan(0);
      for (const from of loads) expect(from, `partition ${p}`).toMatch(/^snapshot \S+ \+ \d+ runs records$/);
    }

    // A rebuild of the runs topic says what the clients saw.
    const rebuilt = await rebuiltRuns(prefix);
    expect(rebuilt).toHaveLength(RUNS);
    for (const r of rebuilt) {
      const run = runs.get(r.run_id) as RemoteRun;
      expect(r).toMatchObject({
        terminal_state: run.state.status,
        rule: 'exact_repeat',
        calls_total: 8,
        calls_executed: 6,
        calls_cached: 1,
      });
    }
    console.log(
      `failover: ${moved.length} runs moved from the killed worker; load finished ${took} ms after the SIGKILL`,
    );
  }, 240_000);
});
