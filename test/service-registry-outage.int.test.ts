/**
 * The registry answers 503 for one schema id while a batch is decided: the request before it in
 * the batch was decided on a copy, so the retry decides it again and records it, and `rebuild`
 * shows every call the client was told to execute. The worker waits out the outage in its group
 * (one assignment, no rejoin), says why in its log and counts it.
 */
import { randomUUID } from 'node:crypto';
import avsc, { type Schema } from 'avsc';
import { afterEach, describe, expect, it } from 'vitest';
import { createRemoteGuard } from '../src/client/index.js';
import { RegistrySchemaStore } from '../src/events/registry-schema-store.js';
import { frame } from '../src/events/wire.js';
import { TOPICS } from '../src/log/event-log.js';
import { GuardWorker } from '../src/service/guard-worker.js';
import { openService } from '../src/service/open-service.js';
import { SERVICE_SCHEMAS, serviceSchemaText } from '../src/service/service-codec.js';
import {
  emptyRequest,
  REQUEST_ID_HEADER,
  SERVICE_TOPICS,
  type WireRequest,
} from '../src/service/service-topics.js';
import { kafkaEnv } from './setup/kafka-env.js';
import { rebuiltRuns } from './support/service/rebuilt-runs.js';
import { registryProxy } from './support/service/registry-proxy.js';
import { SERVICE_SECRET_KEY } from './support/service/serve-process.js';
import { readServiceTopics } from './support/service/service-topics-read.js';
import { until } from './support/until.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

describe('loopguard serve: a registry outage mid-batch', () => {
  it('leaves nothing decided in memory: the retry records every call, rebuild shows it', async () => {
    const { brokers, registryUrl } = kafkaEnv();
    const topicPrefix = `outage-${randomUUID().slice(0, 8)}.`;
    const proxy = await registryProxy(registryUrl);
    cleanups.push(() => proxy.close());
    // The worker reads schemas through the proxy; clients and the test use the registry itself.
    const conn = await openService({ brokers, registryUrl: proxy.url, topicPrefix });
    cleanups.push(() => conn.close());
    const lines: string[] = [];
    const worker = await GuardWorker.start({
      ...conn,
      secretKey: SERVICE_SECRET_KEY,
      groupId: `g-${topicPrefix}`,
      workerId: 'w-outage',
      onLog: (l) => lines.push(l),
    });
    cleanups.push(() => worker.stop());
    const guard = await createRemoteGuard({
      secretKey: SERVICE_SECRET_KEY,
      brokers,
      registry: registryUrl,
      topicPrefix,
      timeoutMs: 30_000,
    });
    cleanups.push(() => guard.close());

    // A newer client's schema: one more field, with a default (a BACKWARD step).
    const current = JSON.parse(serviceSchemaText(SERVICE_SCHEMAS.request)) as { fields: unknown[] };
    const newer = {
      ...current,
      fields: [...current.fields, { name: 'client_note', type: ['null', 'string'], default: null }],
    };
    const subject = `${conn.log.physicalName(SERVICE_TOPICS.requests)}-value`;
    const newerId = await new RegistrySchemaStore({ url: registryUrl }).register(
      subject,
      JSON.stringify(newer),
    );
    expect(newerId).not.toBe(conn.requests.schemaId);
    const newerType = avsc.Type.forSchema(newer as Schema);

    const runId = 'order-7';
    const req = (type: WireRequest['type'], fields: Partial<WireRequest> = {}): WireRequest => ({
      ...emptyRequest(randomUUID(), runId, type, Date.now()),
      ...fields,
    });
    expect((await guard.request(req('START_RUN'))).decision).toBe('recorded');

    const charge = req('TOOL_CALL', {
      tool: 'charge',
      args_json: '{"card":"4242","amount":10}',
      operation_key: 'charge-order-7',
      side_effect: true,
    });
    const result = req('TOOL_RESULT', { call_id: charge.request_id, result_json: '{"charged":10}' });
    proxy.fail(newerId);
    // One append, one record batch: the worker fetches both in one batch, the charge first.
    await conn.log.append(SERVICE_TOPICS.requests, [
      {
        key: runId,
        value: conn.requests.encode(charge),
        headers: { [REQUEST_ID_HEADER]: charge.request_id },
      },
      {
        key: runId,
        value: frame(newerId, newerType.toBuffer({ ...result, client_note: 'v2 client' })),
        headers: { [REQUEST_ID_HEADER]: result.request_id },
      },
    ]);
    // More refusals than the registry client's own retries: the batch failed more than once.
    const log = () => lines.join('\n');
    await until('the worker asked for the failing schema several times', () => proxy.refused() >= 6, {
      ms: 60_000,
      log,
    });
    proxy.heal();

    const answered = async () => {
      const t = await readServiceTopics(brokers, registryUrl, topicPrefix);
      return [charge, result].every((r) => t.decisions.some((d) => d.request_id === r.request_id));
    };
    await until('both requests answered', answered, { ms: 60_000, every: 500, log });
    const { decisions } = await readServiceTopics(brokers, registryUrl, topicPrefix);
    const of = (r: WireRequest) => decisions.filter((d) => d.request_id === r.request_id);
    expect(of(charge).map((d) => d.decision)).toEqual(['execute']);
    expect(of(result).map((d) => d.decision)).toEqual(['continue']);

    // The run's stream holds the call the client was told to execute, and its result.
    const events = await Promise.all(
      (await conn.log.readKey(TOPICS.runs, runId)).map((r) => conn.events.decode(TOPICS.runs, r.value)),
    );
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.filter((e) => e.event.type === 'ToolCallRequested')).toHaveLength(1);
    expect(events.filter((e) => e.event.type === 'ToolCallCompleted')).toHaveLength(1);
    const rebuilt = (await rebuiltRuns(topicPrefix)).find((r) => r.run_id === runId);
    expect(rebuilt).toMatchObject({ calls_total: 1, calls_executed: 1 });

    // It waited in its group, said why, and counted it.
    expect(lines.filter((l) => l.includes('assigned partitions'))).toHaveLength(1);
    expect(lines.some((l) => /waits \d+ ms and is decided again .*registry_unavailable/.test(l))).toBe(true);
    expect(worker.stats.dependencyRetries).toBeGreaterThan(0);
    expect(await worker.stats.metrics.registry.metrics()).toMatch(
      /loopguard_serve_dependency_retries_total\{code="registry_unavailable"\} [1-9]/,
    );
  }, 180_000);
});
