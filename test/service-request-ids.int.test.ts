/**
 * A request id names one request: the same id with another body (a search, then a charge with an
 * operation key under the search's id) is refused with `duplicate_request_id`, records nothing and
 * takes no ledger claim, before and after another worker folded the run from the log; the same
 * request again still gets the decision it got.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TOPICS } from '../src/log/event-log.js';
import { GuardWorker } from '../src/service/guard-worker.js';
import { emptyRequest, type WireRequest } from '../src/service/service-topics.js';
import { inProcessService } from './support/service/in-process-service.js';
import { SERVICE_SECRET_KEY } from './support/service/serve-process.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

describe('loopguard serve: a reused request id', () => {
  it('with another body is duplicate_request_id, never the old answer, also after a takeover', async () => {
    const { topicPrefix, conn, worker, guard } = await inProcessService('reqid', cleanups);
    const runId = 'shop-1';
    const req = (id: string, type: WireRequest['type'], fields: Partial<WireRequest> = {}): WireRequest => ({
      ...emptyRequest(id, runId, type, Date.now()),
      ...fields,
    });
    expect((await guard.request(req('start', 'START_RUN'))).decision).toBe('recorded');
    const search = req('call-1', 'TOOL_CALL', { tool: 'search', args_json: '{"q":"shoes"}' });
    const first = await guard.request(search);
    expect(first.decision).toBe('execute');
    const charge = req('call-1', 'TOOL_CALL', {
      tool: 'charge',
      args_json: '{"card":"4242","amount":99}',
      operation_key: 'charge-shop-1',
      side_effect: true,
    });
    const refused = async () =>
      expect(await guard.request(charge)).toMatchObject({
        decision: 'error',
        error_code: 'duplicate_request_id',
        error_field: 'request_id',
        run_id: runId,
      });
    await refused();
    // A true repeat (re-sent later, another send time) is still answered with what it got.
    expect(await guard.request({ ...search, sent_at_ms: search.sent_at_ms + 5_000 })).toEqual(first);

    // Another worker folds the run from the log (the body hash rides on the decided batch).
    await worker.stop();
    const next = await GuardWorker.start({
      ...conn,
      secretKey: SERVICE_SECRET_KEY,
      groupId: `g-${topicPrefix}`,
      workerId: 'w-reqid-2',
    });
    cleanups.push(() => next.stop());
    await refused();
    expect(await guard.request(search)).toEqual(first);

    const events = await Promise.all(
      (await conn.log.readKey(TOPICS.runs, runId)).map((r) => conn.events.decode(TOPICS.runs, r.value)),
    );
    const calls = events.flatMap((e) => (e.event.type === 'ToolCallRequested' ? [e.event.tool] : []));
    expect(calls).toEqual(['search']);
    expect(events.some((e) => e.event.type === 'OperationClaimed')).toBe(false);
    const ledger = await conn.log.readAll(TOPICS.ledger).catch(() => []);
    expect(ledger).toHaveLength(0);
  }, 120_000);
});
