/**
 * A worker under a new group (a mistyped `--group`) on a requests topic with history starts at its
 * end and says so: it re-decides none of the old requests, and decides what is published once it is
 * in the group. `fromBeginning` (`--from-beginning`) decides the history, and says that too.
 */
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import type { Admin } from 'kafkajs';
import { afterEach, describe, expect, it } from 'vitest';
import { DecisionWaiters } from '../src/client/decision-waiters.js';
import { TOPICS } from '../src/log/event-log.js';
import { startNewPartitions } from '../src/service/group-start.js';
import { GuardWorker } from '../src/service/guard-worker.js';
import { emptyRequest, SERVICE_TOPICS, type WireRequest } from '../src/service/service-topics.js';
import { kafkaEnv } from './setup/kafka-env.js';
import { inProcessService } from './support/service/in-process-service.js';
import { SERVICE_SECRET_KEY } from './support/service/serve-process.js';
import { readServiceTopics } from './support/service/service-topics-read.js';

const { createErrorFromCode } = createRequire(import.meta.url)('kafkajs/src/protocol/error.js') as {
  createErrorFromCode(code: number): Error;
};
const NOT_LEADER_OR_FOLLOWER = 6;

/** The real admin, whose first `fetchTopicOffsets` of each topic meets a leader being elected. */
function electing(admin: Admin): { admin: Admin; failed: string[] } {
  const failed: string[] = [];
  const fetchTopicOffsets: Admin['fetchTopicOffsets'] = async (topic) => {
    if (!failed.includes(topic)) {
      failed.push(topic);
      throw createErrorFromCode(NOT_LEADER_OR_FOLLOWER);
    }
    return admin.fetchTopicOffsets(topic);
  };
  return { admin: { ...admin, fetchTopicOffsets }, failed };
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

describe('loopguard serve: a new group on a requests topic with history', () => {
  it('starts at the end unless fromBeginning, and says which', async () => {
    const { brokers, registryUrl } = kafkaEnv();
    const { topicPrefix, conn, worker, guard } = await inProcessService('newgroup', cleanups);
    const req = (
      runId: string,
      type: WireRequest['type'],
      fields: Partial<WireRequest> = {},
    ): WireRequest => ({
      ...emptyRequest(randomUUID(), runId, type, Date.now()),
      ...fields,
    });
    for (const runId of ['old-1', 'old-2', 'old-3']) {
      expect((await guard.request(req(runId, 'START_RUN'))).decision).toBe('recorded');
      const call = req(runId, 'TOOL_CALL', { tool: 'search', args_json: '{"q":"x"}' });
      expect((await guard.request(call)).decision).toBe('execute');
    }
    await worker.stop();
    const before = await readServiceTopics(brokers, registryUrl, topicPrefix);
    const runsBefore = (await conn.log.readAll(TOPICS.runs)).length;

    const lines: string[] = [];
    const typo = await GuardWorker.start({
      ...conn,
      secretKey: SERVICE_SECRET_KEY,
      groupId: `typo-${topicPrefix}`,
      workerId: 'w-typo',
      onLog: (l) => lines.push(l),
    });
    cleanups.push(() => typo.stop());
    expect(lines.join('\n')).toMatch(
      /group typo-\S+ has decided nothing on partitions \[[0-9,]+\] of \S+loopguard\.requests: starting at their end .*--from-beginning/,
    );
    // A request published once the worker is in its group is decided (by it: the old group is gone).
    const fresh = await guard.request(req('new-1', 'START_RUN'));
    expect(fresh).toMatchObject({ decision: 'recorded', worker: 'w-typo' });
    const after = await readServiceTopics(brokers, registryUrl, topicPrefix);
    expect(after.decisions).toHaveLength(before.decisions.length + 1);
    expect((await conn.log.readAll(TOPICS.runs)).length).toBe(runsBefore + 1);
    await typo.stop();

    const history: string[] = [];
    const replaying = await GuardWorker.start({
      ...conn,
      secretKey: SERVICE_SECRET_KEY,
      groupId: `replay-${topicPrefix}`,
      workerId: 'w-replay',
      fromBeginning: true,
      onLog: (l) => history.push(l),
    });
    cleanups.push(() => replaying.stop());
    expect(history.join('\n')).toMatch(/deciding every request already there \(--from-beginning\)/);
    const end = Date.now() + 60_000;
    let decided = 0;
    while (Date.now() < end) {
      const t = await readServiceTopics(brokers, registryUrl, topicPrefix);
      decided = t.decisions.length - after.decisions.length;
      if (decided >= after.requests.length) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    // Every request already there is answered again: as repeats, with the decisions the runs' log gives them.
    expect(decided).toBe(after.requests.length);
  }, 180_000);
});

describe('loopguard serve and its client while a leader is elected', () => {
  it('a new group starts and a client follows decisions: the end offsets are fetched again', async () => {
    const { topicPrefix, conn, worker, guard } = await inProcessService('electing', cleanups);
    const req = (runId: string) => emptyRequest(randomUUID(), runId, 'START_RUN', Date.now());
    expect((await guard.request(req('old-1'))).decision).toBe('recorded');
    await worker.stop();
    const real = conn.log.kafka.admin();
    await real.connect();
    cleanups.push(() => real.disconnect());
    const requests = conn.log.physicalName(SERVICE_TOPICS.requests);
    const decisions = conn.log.physicalName(SERVICE_TOPICS.decisions);

    const flaky = electing(real);
    const groupId = `late-${topicPrefix}`;
    const note = await startNewPartitions(flaky.admin, groupId, requests, false);
    expect(note).toMatch(/starting at their end/);
    expect(flaky.failed).toEqual([requests]);
    const [committed] = await real.fetchOffsets({ groupId, topics: [requests] });
    expect(committed?.partitions.some((p) => Number(p.offset) > 0)).toBe(true);

    const following = electing(real);
    const waiters = await DecisionWaiters.follow(conn.log, conn.decisions, following.admin);
    cleanups.push(() => waiters.close());
    expect(following.failed).toEqual([decisions]);
  });
});
