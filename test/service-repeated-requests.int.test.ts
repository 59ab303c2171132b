/**
 * A request published again (a client that timed out re-sends it: at-least-once publish) on the
 * real broker: it gets the decision it already got, field for field, and the run records it once;
 * also after the worker that decided it was SIGKILLed and another folded the run from the log.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createRemoteGuard } from '../src/client/index.js';
import { TOPICS } from '../src/log/event-log.js';
import { openService } from '../src/service/open-service.js';
import {
  emptyRequest,
  REQUEST_ID_HEADER,
  SERVICE_TOPICS,
  type WireDecision,
  type WireRequest,
} from '../src/service/service-topics.js';
import {
  balanced,
  SERVICE_SECRET_KEY,
  type ServeProcess,
  serveGroup,
} from './support/service/serve-process.js';
import { readServiceTopics } from './support/service/service-topics-read.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

/** Resolves once `w` logs a line matching `pattern` after position `from` of its log. */
async function logsAfter(w: ServeProcess, from: number, pattern: RegExp, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!pattern.test(w.log().slice(from))) {
    if (Date.now() > until) throw new Error(`no ${pattern} within ${timeoutMs} ms:\n${w.log().slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('loopguard serve: a request published again', () => {
  it('gets the decision it already got and is recorded once, also after its worker was SIGKILLed', async () => {
    const { brokers, registryUrl, prefix, start } = serveGroup('repeat', cleanups);
    const first = start();
    await first.waitFor(/ in group /);
    const workers = [first, start()];
    await balanced(workers, 6);
    const guard = await createRemoteGuard({
      secretKey: SERVICE_SECRET_KEY,
      brokers,
      registry: registryUrl,
      topicPrefix: prefix,
      timeoutMs: 60_000,
    });
    cleanups.push(() => guard.close());
    const conn = await openService({ brokers, registryUrl, topicPrefix: prefix });
    cleanups.push(() => conn.close());

    const runId = 'order-1';
    const req = (type: WireRequest['type'], fields: Partial<WireRequest> = {}): WireRequest => ({
      ...emptyRequest(randomUUID(), runId, type, Date.now()),
      ...fields,
    });
    const charge = req('TOOL_CALL', {
      tool: 'charge',
      args_json: '{"card":"4242","amount":10}',
      operation_key: 'charge-order-1',
      side_effect: true,
    });
    const asked: WireRequest[] = [
      req('START_RUN'),
      charge,
      req('TOOL_RESULT', { call_id: charge.request_id, result_json: '{"charged":10}' }),
      req('TOOL_CALL', { tool: 'search', args_json: '{"q":"receipt"}' }),
    ];
    const decided: WireDecision[] = [];
    for (const r of asked) {
      const d = await guard.request(r);
      expect(d.decision).not.toBe('error');
      // Published again once decided: the same answer, not run_exists or a second execute.
      expect(await guard.request(r)).toEqual(d);
      decided.push(d);
    }
    expect(decided.map((d) => d.decision)).toEqual(['recorded', 'execute', 'continue', 'execute']);

    // The worker that decided them dies; the other folds the run from the log and answers alike.
    const partition = await conn.log.partitionOfKey(SERVICE_TOPICS.requests, runId);
    const owner = workers.find((w) => w.assigned().includes(partition)) as ServeProcess;
    const survivor = workers.find((w) => w !== owner) as ServeProcess;
    expect(decided.every((d) => owner.log().includes(d.worker))).toBe(true);
    const mark = survivor.log().length;
    owner.child.kill('SIGKILL');
    await owner.exited;
    await logsAfter(survivor, mark, new RegExp(`partition ${partition}: fenced`));
    for (const [i, r] of asked.entries()) expect(await guard.request(r)).toEqual(decided[i]);

    // A repeat that lands before its original is decided (both in the topic at once): one answer, twice.
    const search = asked[3] as WireRequest;
    const again = req('TOOL_RESULT', { call_id: search.request_id, result_json: '{"hits":1}' });
    await conn.log.append(SERVICE_TOPICS.requests, [
      {
        key: runId,
        value: conn.requests.encode(again),
        headers: { [REQUEST_ID_HEADER]: again.request_id },
      },
    ]);
    const d = await guard.request(again);
    expect(d.decision).toBe('continue');
    expect(d.seq).toBeGreaterThan(decided.at(-1)?.seq ?? 0);
    expect(survivor.log()).toContain(d.worker);

    // The repeat's answer may commit a batch after the one that answered the waiting client.
    let topics = await readServiceTopics(brokers, registryUrl, prefix);
    for (
      let i = 0;
      i < 50 && topics.decisions.filter((x) => x.request_id === again.request_id).length < 2;
      i++
    ) {
      await new Promise((r) => setTimeout(r, 200));
      topics = await readServiceTopics(brokers, registryUrl, prefix);
    }
    const answers = new Map<string, string[]>();
    for (const x of topics.decisions)
      answers.set(x.request_id, [...(answers.get(x.request_id) ?? []), JSON.stringify(x)]);
    for (const r of asked) {
      expect(answers.get(r.request_id)).toHaveLength(3);
      expect(new Set(answers.get(r.request_id)).size).toBe(1);
    }
    expect(answers.get(again.request_id)).toHaveLength(2);
    expect(new Set(answers.get(again.request_id)).size).toBe(1);

    // The run's stream holds each request's events once, seq after seq.
    const events = await Promise.all(
      (await conn.log.readKey(TOPICS.runs, runId)).map((r) => conn.events.decode(TOPICS.runs, r.value)),
    );
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    const count = (type: string) => events.filter((e) => e.event.type === type).length;
    expect(count('RunStarted')).toBe(1);
    expect(count('ToolCallRequested')).toBe(2);
    expect(count('ToolCallCompleted')).toBe(2);
    expect(count('OperationCompleted')).toBe(1);
  }, 180_000);
});
