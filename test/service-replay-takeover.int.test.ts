/**
 * A replay across a takeover: signed bytes decided by one worker, published again after their run
 * has forgotten the answer and their partition has moved to another worker. The memory of decided
 * signatures is each worker's own, so the new owner reads it back from the requests partition
 * (recall-signatures.ts) and refuses the replay, as the first worker would have. The same bytes
 * published to another requests partition are refused there too (process-batch.ts: misrouted).
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { GuardWorker } from '../src/service/guard-worker.js';
import { openService } from '../src/service/open-service.js';
import { signRequest } from '../src/service/request-signature.js';
import { emptyRequest, SERVICE_TOPICS, type WireDecision } from '../src/service/service-topics.js';
import { parseTenantKeys } from '../src/service/tenant-keys.js';
import { kafkaEnv } from './setup/kafka-env.js';
import { remoteClient } from './support/service/in-process-service.js';
import { SERVICE_SECRET_KEY } from './support/service/serve-process.js';
import { readServiceTopics } from './support/service/service-topics-read.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

const SECRET = 'acme-agent-secret-0123456789abcdef0123456789';
const KEYS = parseTenantKeys({ keys: [{ id: 'acme-agent', tenant: 'acme', secret: SECRET }] });

describe('loopguard serve with tenant keys: a replay after a takeover', () => {
  it('is refused by the worker that took the partition over', async () => {
    const { brokers, registryUrl } = kafkaEnv();
    const topicPrefix = `replay-takeover-${randomUUID().slice(0, 8)}.`;
    const conn = await openService({ brokers, registryUrl, topicPrefix });
    cleanups.push(() => conn.close());
    const start = async (workerId: string) => {
      const w = await GuardWorker.start({
        ...conn,
        secretKey: SERVICE_SECRET_KEY,
        groupId: `g-${topicPrefix}`,
        workerId,
        tenantKeys: KEYS,
      });
      cleanups.push(() => w.stop());
      return w;
    };
    const first = await start('w-first');
    const [acme, raw] = await Promise.all([
      remoteClient(topicPrefix, cleanups, { credentials: { keyId: 'acme-agent', secret: SECRET } }),
      remoteClient(topicPrefix, cleanups),
    ]);
    const run = await acme.startRun({ runId: 'acme-replay' });
    const once = signRequest(
      { ...emptyRequest(randomUUID(), 'acme-replay', 'CHECKPOINT', Date.now()), checkpoint_id: 'cp-once' },
      'acme-agent',
      SECRET,
    );
    expect(await raw.request(once)).toMatchObject({ decision: 'recorded', checkpoint_id: 'cp-once' });
    // The run keeps its latest 16 answers: after these it no longer remembers the first.
    for (let i = 0; i < 17; i++) await run.checkpoint(`cp-${i}`);
    await first.stop();

    await start('w-second');
    expect(await raw.request(once)).toMatchObject({
      decision: 'error',
      error_code: 'unauthenticated',
      error_field: 'signature',
    });
    // The run goes on under the new owner: a fresh request is decided.
    await expect(run.checkpoint('cp-after')).resolves.toBeDefined();

    // The same bytes published to another requests partition: refused as misrouted before anything
    // else, because a run's requests are decided only on the partition its id keys them to (here
    // one worker owns every partition and would remember the signature too; the owner of another
    // partition would not, which is what the rule is for).
    const own = await conn.log.partitionOfKey(SERVICE_TOPICS.requests, 'acme-replay');
    const count = (await conn.log.partitionEnds(SERVICE_TOPICS.requests)).length;
    const producer = conn.log.kafka.producer();
    await producer.connect();
    cleanups.push(() => producer.disconnect());
    await producer.send({
      topic: conn.log.physicalName(SERVICE_TOPICS.requests),
      messages: [{ key: 'acme-replay', value: conn.requests.encode(once), partition: (own + 1) % count }],
    });
    let answers: WireDecision[] = [];
    for (const until = Date.now() + 60_000; answers.length < 3 && Date.now() < until; ) {
      await new Promise((r) => setTimeout(r, 250));
      const { decisions } = await readServiceTopics(brokers, registryUrl, topicPrefix);
      answers = decisions.filter((d) => d.request_id === once.request_id);
    }
    expect(answers.map((d) => d.error_code)).toEqual([null, 'unauthenticated', 'forbidden']);
    expect(answers[2]).toMatchObject({ decision: 'error', error_field: 'run_id' });
  }, 120_000);
});
