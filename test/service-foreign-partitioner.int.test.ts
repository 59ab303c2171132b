/**
 * A client that does not partition by murmur2 (librdkafka's default, consistent_random, is not)
 * puts a run's requests in another partition than the run's events. The worker still decides the
 * run correctly, loading it from its own stream (the runs topic is written in transactions, whose
 * markers such a load must get past), says once in its log what the operator should fix, and a
 * worker that takes over decides on from the run's stream too.
 */
import { Partitioners } from 'kafkajs';
import { afterEach, describe, expect, it } from 'vitest';
import { TOPICS } from '../src/log/event-log.js';
import { GuardWorker } from '../src/service/guard-worker.js';
import { emptyRequest, SERVICE_TOPICS, type WireRequest } from '../src/service/service-topics.js';
import { kafkaEnv } from './setup/kafka-env.js';
import { inProcessService } from './support/service/in-process-service.js';
import { SERVICE_SECRET_KEY } from './support/service/serve-process.js';
import { readServiceTopics } from './support/service/service-topics-read.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

describe('loopguard serve: a client with another partitioner', () => {
  it('decides the run from its stream, says so once, and a takeover does the same', async () => {
    const log: string[] = [];
    const svc = await inProcessService('foreign', cleanups, { onLog: (l) => log.push(l) });
    const { conn } = svc;
    const runId = 'py-run-1';
    const runsPartition = await conn.log.partitionOfKey(TOPICS.runs, runId);
    const elsewhere = (runsPartition + 1) % 6;
    const producer = conn.log.kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
    await producer.connect();
    cleanups.push(() => producer.disconnect());
    const publish = async (reqs: WireRequest[]) => {
      await producer.send({
        topic: conn.log.physicalName(SERVICE_TOPICS.requests),
        messages: reqs.map((r) => ({ key: runId, value: conn.requests.encode(r), partition: elsewhere })),
      });
    };
    const search = (n: number): WireRequest[] => [
      {
        ...emptyRequest(`call-${n}`, runId, 'TOOL_CALL', Date.now()),
        tool: 'search',
        args_json: '{"q":"same"}',
      },
      {
        ...emptyRequest(`result-${n}`, runId, 'TOOL_RESULT', Date.now()),
        call_id: `call-${n}`,
        result_json: '[]',
      },
    ];
    const decided = async (n: number) => {
      const { brokers, registryUrl } = kafkaEnv();
      for (const until = Date.now() + 60_000; Date.now() < until; ) {
        const { decisions } = await readServiceTopics(brokers, registryUrl, svc.topicPrefix);
        if (decisions.length >= n) return decisions;
        await new Promise((r) => setTimeout(r, 250));
      }
      throw new Error(`fewer than ${n} decisions within 60 s`);
    };

    await publish([emptyRequest('start', runId, 'START_RUN', Date.now()), ...search(1), ...search(2)]);
    await decided(5);
    await svc.worker.stop();
    // Another worker: the run is in no snapshot of the partition its requests use.
    const next = await GuardWorker.start({
      ...conn,
      secretKey: SERVICE_SECRET_KEY,
      groupId: `g-${svc.topicPrefix}`,
      workerId: 'w-next',
      onLog: (l) => log.push(l),
    });
    cleanups.push(() => next.stop());
    await publish([search(3)[0] as WireRequest]);
    const decisions = await decided(6);

    expect(decisions.map((d) => [d.request_id, d.decision])).toEqual([
      ['start', 'recorded'],
      ['call-1', 'execute'],
      ['result-1', 'continue'],
      ['call-2', 'execute'],
      ['result-2', 'continue'],
      ['call-3', 'stop_partial'],
    ]);
    expect(decisions.at(-1)).toMatchObject({ rule: 'exact_repeat', worker: 'w-next' });
    const notes = log.filter((l) => l.includes('does not partition by murmur2'));
    expect(notes).toHaveLength(2); // once per worker
    expect(notes[0]).toContain(
      `run ${runId} has its requests here but its events in runs partition ${runsPartition}`,
    );
  }, 120_000);
});
