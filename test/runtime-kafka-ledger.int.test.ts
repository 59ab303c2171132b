import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import { RegistrySchemaStore } from '../src/events/registry-schema-store.js';
import { KafkaLedger } from '../src/log/kafka/kafka-ledger.js';
import { KafkaLog } from '../src/log/kafka/kafka-log.js';
import { ledgerContract } from './ledger-contract.js';
import { kafkaEnv } from './setup/kafka-env.js';

async function pair(clock?: { now(): number }, clockOfA: { now(): number } | undefined = clock) {
  const { brokers, registryUrl } = kafkaEnv();
  const topicPrefix = `t-${randomUUID()}-`;
  const schemaStore = new RegistrySchemaStore({ url: registryUrl });
  const logs = await Promise.all([0, 1].map(() => KafkaLog.connect({ brokers, topicPrefix })));
  const [la, lb] = logs as [KafkaLog, KafkaLog];
  const opts = { schemaStore, leaseMs: 60_000 };
  const a = await KafkaLedger.open({ log: la, ...opts, ...(clockOfA ? { clock: clockOfA } : {}) });
  const b = await KafkaLedger.open({ log: lb, ...opts, ...(clock ? { clock } : {}) });
  return {
    a,
    b,
    close: async () => {
      await Promise.all([a.close(), b.close()]);
      await Promise.all(logs.map((l) => l.close()));
    },
  };
}

ledgerContract('KafkaLedger', () => pair(), 60_000);

it('turns a claim with no outcome within the lease into in doubt', { timeout: 60_000 }, async () => {
  let now = 1_000_000;
  const p = await pair({ now: () => now });
  try {
    expect(await p.a.claim('k-lease', { runId: 'r', callId: 'c1' })).toEqual({ status: 'won' });
    expect(await p.b.claim('k-lease', { runId: 'r', callId: 'c2' })).toMatchObject({ status: 'in_flight' });
    now += 60_000;
    expect(await p.b.claim('k-lease', { runId: 'r', callId: 'c3' })).toMatchObject({
      status: 'in_doubt',
      owner: { callId: 'c1' },
    });
    expect(await p.b.get('k-lease')).toMatchObject({ status: 'in_doubt' });
    // Its own claim made again (a worker deciding a request again after its batch aborted, here
    // past the lease): nothing ran under it, so it is won, not in doubt (it was before 2026-12-03).
    expect(await p.a.claim('k-lease', { runId: 'r', callId: 'c1' })).toEqual({ status: 'won' });
  } finally {
    await p.close();
  }
});

it("measures the lease on the reader's own clock: a claimant whose clock is slow holds its claim", {
  timeout: 60_000,
}, async () => {
  // A's clock is 5 minutes slow; its claim carries its stamp. Before 2026-12-03 B read the claim
  // as 5 minutes old, past the lease: in doubt at once, settled away by a reconcile, run twice.
  let now = 10_000_000;
  const p = await pair({ now: () => now }, { now: () => now - 300_000 });
  try {
    const A = { runId: 'run-A', callId: 'c1' };
    expect(await p.a.claim('k-skew', A)).toEqual({ status: 'won' });
    expect(await p.b.claim('k-skew', { runId: 'run-B', callId: 'c1' })).toMatchObject({
      status: 'in_flight',
      owner: A,
    });
    await expect(p.b.settle('k-skew', false, 'null', A)).rejects.toMatchObject({ code: 'settle_refused' });
    // The lease still ends, on B's clock, a lease after B first saw the claim.
    now += 60_000;
    expect(await p.b.claim('k-skew', { runId: 'run-B', callId: 'c2' })).toMatchObject({ status: 'in_doubt' });
  } finally {
    await p.close();
  }
});

it('answers a read at once when the ledger topic ends in a transaction (the copy projector writes its copies in transactions)', {
  timeout: 60_000,
}, async () => {
  const { brokers } = kafkaEnv();
  const topicPrefix = `t-${randomUUID()}-`;
  const log = await KafkaLog.connect({ brokers, topicPrefix });
  const ledger = await KafkaLedger.open({
    log,
    schemaStore: new RegistrySchemaStore({ url: kafkaEnv().registryUrl }),
  });
  const producer = log.kafka.producer({
    transactionalId: `copies-${topicPrefix}`,
    idempotent: true,
    maxInFlightRequests: 1,
  });
  try {
    expect(await ledger.claim('k-txn', { runId: 'r', callId: 'c1' })).toEqual({ status: 'won' });
    await producer.connect();
    // Whatever the copy is, the topic's last offset is now its transaction's commit marker.
    const txn = await producer.transaction();
    await txn.send({
      topic: log.physicalName('loopguard.ledger'),
      messages: [{ key: 'other', value: 'not a ledger record' }],
    });
    await txn.commit();
    const started = Date.now();
    expect(await ledger.get('k-txn')).toMatchObject({ status: 'claimed', owner: { callId: 'c1' } });
    // Before the follow learned to pass markers, this waited for the fold's 30 s timeout.
    expect(Date.now() - started).toBeLessThan(10_000);
  } finally {
    await producer.disconnect().catch(() => undefined);
    await ledger.close();
    await log.close();
  }
});
