/**
 * A worker fenced on a partition it still owns: the partition's transactional id was registered
 * again by a takeover that finished late (begun for an older assignment, or by a worker that had
 * not yet learnt it lost the partition). The worker's next transaction there is refused; it must
 * take the partition back and decide, not let kafkajs stop its consumer for good (kafkajs does not
 * restart a consumer on an error it does not mark retriable, and the process would run on deciding
 * nothing).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { transactionalProducer } from '../src/log/kafka/transactional-producer.js';
import { SERVICE_TOPICS } from '../src/service/service-topics.js';
import { inProcessService } from './support/service/in-process-service.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

describe('loopguard serve: a worker fenced by a late takeover', () => {
  it('takes its partition back and goes on deciding', async () => {
    const lines: string[] = [];
    // No re-send: the decision must come for the request as first published.
    const { topicPrefix, conn, guard } = await inProcessService(
      'late-fence',
      cleanups,
      { onLog: (l) => lines.push(l) },
      { resends: 0 },
    );
    const run = await guard.startRun({ runId: 'fenced-run' });
    const partition = await conn.log.partitionOfKey(SERVICE_TOPICS.requests, 'fenced-run');
    const topic = conn.log.physicalName(SERVICE_TOPICS.requests);
    // The late takeover: registers the id the worker's producer for that partition holds.
    const late = await transactionalProducer(conn.log, `g-${topicPrefix}.${topic}.${partition}`);
    await late.disconnect();

    const r = await run.call({ tool: 'list', args: { page: 1 } }, () => ({ page: 1 }));
    expect(r.status).toBe('executed');
    expect(await run.finish({ verified: true })).toMatchObject({ status: 'COMPLETED' });
    const log = lines.join('\n');
    expect(log).toMatch(new RegExp(`partition ${partition}: transaction aborted`));
    expect(log).not.toMatch(/consumer crashed/);
  }, 90_000);
});
