/**
 * A broker restart in the middle of a run, on a dedicated broker of its own (the shared test
 * broker stays up for the other tests). While the broker is down no call executes (its decision
 * cannot be recorded: fail closed); after the restart the run goes on, and every event the live
 * run had acknowledged is in the topic: a rebuild from the topic equals the live state.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { diceSimilarity } from '../src/domain/index.js';
import { RegistrySchemaStore } from '../src/events/registry-schema-store.js';
import { EventStore } from '../src/log/event-store.js';
import { KafkaLog } from '../src/log/kafka/kafka-log.js';
import { RunActor } from '../src/machines/run-actor.js';
import { type CallResult, nodeHashing } from '../src/runtime/index.js';
import { kafkaEnv } from './setup/kafka-env.js';
import { openGuard } from './support/faults/backends.js';
import { count, hit } from './support/faults/counter.js';
import { type RestartableKafka, startRestartableKafka } from './support/faults/restartable-kafka.js';

let kafka: RestartableKafka;
const dataDir = mkdtempSync(join(tmpdir(), 'loopguard-restart-run-'));
beforeAll(async () => {
  kafka = await startRestartableKafka();
}, 180_000);
afterAll(async () => {
  await kafka?.close();
  rmSync(dataDir, { recursive: true, force: true });
}, 60_000);

const POLICY = { tools: { pay: { sideEffect: true } } };
const pay = (n: number) => ({
  tool: 'pay',
  args: { order: `A${n}` },
  sideEffect: true,
  operationKey: `acme:pay:A${n}`,
});

it('fails closed while the broker is down and loses nothing acknowledged across the restart', {
  timeout: 300_000,
}, async () => {
  const backend = {
    kind: 'kafka' as const,
    dataDir,
    brokers: [kafka.brokers],
    registryUrl: kafkaEnv().registryUrl,
    topicPrefix: `restart-${randomUUID()}-`,
    requestTimeoutMs: 5_000,
  };
  const pays = join(dataDir, 'pay.count');
  const reads = join(dataDir, 'read.count');
  const { guard, close } = await openGuard(backend, POLICY);
  const run = await guard.startRun({ runId: 'restart' });
  expect(
    (
      await run.call(pay(1), () => {
        hit(pays);
        return 'p-1';
      })
    ).status,
  ).toBe('executed');
  expect(
    (
      await run.call({ tool: 'read', args: { f: 1 } }, () => {
        hit(reads);
        return 'one';
      })
    ).status,
  ).toBe('executed');
  const acknowledged = run.state.seq;

  await kafka.stop();
  await expect(
    run.call(pay(2), () => {
      hit(pays);
      return 'p-2';
    }),
  ).rejects.toMatchObject({ code: 'log_unavailable' });
  await expect(
    run.call({ tool: 'read', args: { f: 2 } }, () => {
      hit(reads);
      return 'two';
    }),
  ).rejects.toMatchObject({
    code: 'log_unavailable',
  });
  expect([count(pays), count(reads)]).toEqual([1, 1]);
  expect(run.state.seq).toBe(acknowledged);

  await kafka.start();
  // The clients reconnect on their own; until they have, a call fails closed as above, and the
  // agent simply tries again.
  const retried = async (call: () => Promise<CallResult>) => {
    for (let attempt = 0; attempt < 12; attempt++) {
      const r = await call().catch((e) => {
        if ((e as { code?: string }).code !== 'log_unavailable') throw e;
        return null;
      });
      if (r !== null) return r;
    }
    return null;
  };
  const third = await retried(() =>
    run.call({ tool: 'read', args: { f: 3 } }, () => {
      hit(reads);
      return 'three';
    }),
  );
  expect(third).toMatchObject({ status: 'executed' });
  expect(
    await retried(() =>
      run.call(pay(2), () => {
        hit(pays);
        return 'p-2';
      }),
    ),
  ).toMatchObject({
    status: 'executed',
  });
  expect(
    await run.call(pay(1), () => {
      hit(pays);
      return 'p-1 again';
    }),
  ).toMatchObject({
    status: 'cached',
    value: 'p-1',
  });
  expect([count(pays), count(reads)]).toEqual([2, 2]);
  await run.finish({ verified: true });
  await close();

  const log = await KafkaLog.connect({ brokers: [kafka.brokers], topicPrefix: backend.topicPrefix });
  try {
    const stream = log.runStream(
      await EventStore.create(log, new RegistrySchemaStore({ url: backend.registryUrl })),
    );
    const history = await stream.readStream('restart');
    expect(history.length).toBe(run.state.seq);
    expect(history.map((e) => e.seq)).toEqual(history.map((_, i) => i + 1));
    const rebuilt = new RunActor(
      'restart',
      { hashing: nodeHashing('faults-test-key'), similarity: diceSimilarity },
      { now: () => 0 },
      history,
    );
    expect(rebuilt.state).toEqual(run.state);
  } finally {
    await log.close();
  }
});
