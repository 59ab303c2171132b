/**
 * Bad requests never crash a worker: a request with a wrong field gets an error decision naming
 * it, an undecodable one goes to the dead-letter topic with the reason and still gets an error
 * decision (by the request id header), and the worker goes on deciding the next request.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TOPICS } from '../src/log/event-log.js';
import { emptyRequest, REQUEST_ID_HEADER, SERVICE_TOPICS } from '../src/service/service-topics.js';
import { inProcessService } from './support/service/in-process-service.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

describe('loopguard serve: bad requests', () => {
  it('answers a wrong field with an error naming it, dead-letters an undecodable request, and goes on', async () => {
    const { topicPrefix, conn, worker, guard } = await inProcessService('bad', cleanups);

    const bad = await guard.request({
      ...emptyRequest('bad-1', 'run-b', 'TOOL_CALL', 0),
      tool: 'search',
      args_json: '{oops',
    });
    expect(bad).toMatchObject({
      decision: 'error',
      error_code: 'bad_request',
      error_field: 'args_json',
      worker: 'w-bad',
    });

    // Not Avro at all: published raw, as a broken client would; the run's next request, in the
    // same partition behind it, is decided once the worker got past it.
    await conn.log.append(SERVICE_TOPICS.requests, [
      {
        key: 'run-b',
        value: Buffer.from('{"json":"not avro"}'),
        headers: { [REQUEST_ID_HEADER]: 'garbage-1' },
      },
    ]);
    const started = await guard.request(emptyRequest('start-1', 'run-b', 'START_RUN', 0));
    expect(started).toMatchObject({ decision: 'recorded', status: 'RUNNING' });
    const dlq = await conn.log.readAll(TOPICS.dlq);
    expect(dlq).toHaveLength(1);
    expect(dlq[0]?.headers).toMatchObject({
      code: 'bad_magic',
      'origin.topic': `${topicPrefix}loopguard.requests`,
    });
    const decisions = await conn.log.readAll(SERVICE_TOPICS.decisions);
    const all = await Promise.all(decisions.map((d) => conn.decisions.decode(d.value)));
    expect(all.find((d) => d.request_id === 'garbage-1')).toMatchObject({
      decision: 'error',
      error_code: 'bad_magic',
      error_field: 'value',
    });
    expect(worker.stats.deadLettered).toBe(1);
  });
});
