/**
 * Two tenants on one worker with tenant keys: each acts on its own runs only. Every cross-tenant
 * action is refused with `forbidden` (and counted): a call in, a cancel of, a resume of, a reissue
 * on another tenant's run, a run started for another tenant; naming the other tenant's operation key
 * names an operation of one's own (it runs, it is not the other's cached result), naming it by its
 * ledger name (`acme:charge-1`) is refused; unsigned, forged, expired and replayed requests are
 * `unauthenticated`; only an approver's key resumes, recorded as the approver.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { RemoteGuard } from '../src/client/index.js';
import { TOPICS } from '../src/log/event-log.js';
import { GuardWorker } from '../src/service/guard-worker.js';
import { openService } from '../src/service/open-service.js';
import { signRequest } from '../src/service/request-signature.js';
import { emptyRequest } from '../src/service/service-topics.js';
import { parseTenantKeys } from '../src/service/tenant-keys.js';
import { kafkaEnv } from './setup/kafka-env.js';
import { remoteClient } from './support/service/in-process-service.js';
import { SERVICE_SECRET_KEY } from './support/service/serve-process.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

const secret = (who: string) => `${who}-secret-0123456789abcdef0123456789`;
const KEYS = parseTenantKeys({
  keys: [
    { id: 'acme-agent', tenant: 'acme', secret: secret('acme-agent') },
    { id: 'acme-ops', tenant: 'acme', secret: secret('acme-ops'), approver: true },
    { id: 'globex-agent', tenant: 'globex', secret: secret('globex-agent') },
    { id: 'globex-ops', tenant: 'globex', secret: secret('globex-ops'), approver: true },
  ],
});

describe('loopguard serve with tenant keys: two tenants on one service', () => {
  it('refuses every cross-tenant action, counts it, and takes tenant and approver from the key', async () => {
    const { brokers, registryUrl } = kafkaEnv();
    const topicPrefix = `tenants-${randomUUID().slice(0, 8)}.`;
    const conn = await openService({ brokers, registryUrl, topicPrefix });
    cleanups.push(() => conn.close());
    const worker = await GuardWorker.start({
      ...conn,
      secretKey: SERVICE_SECRET_KEY,
      groupId: `g-${topicPrefix}`,
      workerId: 'w-tenants',
      tenantKeys: KEYS,
    });
    cleanups.push(() => worker.stop());
    const client = (keyId: string | null, keySecret?: string): Promise<RemoteGuard> =>
      remoteClient(
        topicPrefix,
        cleanups,
        keyId === null ? {} : { credentials: { keyId, secret: keySecret ?? secret(keyId) } },
      );
    const [acme, acmeOps, globex, globexOps, unsigned, forged] = await Promise.all([
      client('acme-agent'),
      client('acme-ops'),
      client('globex-agent'),
      client('globex-ops'),
      client(null),
      client('acme-agent', secret('globex-agent')),
    ]);

    let charged = 0;
    const charge = async () => {
      charged++;
      return { charged: 10, n: charged };
    };
    const run = await acme.startRun({ runId: 'acme-order' });
    const call = { tool: 'charge', args: { amount: 10 }, operationKey: 'charge-1', sideEffect: true };
    expect(await run.call(call, charge)).toMatchObject({ status: 'executed', value: { charged: 10, n: 1 } });

    const forbidden = (field: string) => ({ code: 'forbidden', details: { field } });
    // Another tenant's run: no call, no cancel, no resume, no reissue, no second start.
    await expect(globex.run('acme-order').call({ tool: 'search', args: {} }, charge)).rejects.toMatchObject(
      forbidden('run_id'),
    );
    await expect(globex.run('acme-order').cancel('mine now')).rejects.toMatchObject(forbidden('run_id'));
    await expect(
      globexOps.resume('acme-order', { preconditionChange: 'approved', approvedBy: 'acme-ops' }),
    ).rejects.toMatchObject(forbidden('run_id'));
    await expect(
      globexOps.run('acme-order').reissue('charge-1', 'charge-1#2', { reason: 'again' }),
    ).rejects.toMatchObject(forbidden('run_id'));
    await expect(globex.startRun({ runId: 'acme-order' })).rejects.toMatchObject(forbidden('run_id'));
    await expect(globex.startRun({ runId: 'globex-as-acme', tenant: 'acme' })).rejects.toMatchObject(
      forbidden('tenant'),
    );

    // The same operation key in the other tenant is that tenant's own operation: it runs.
    const theirs = await globex.startRun({ runId: 'globex-order' });
    expect(await theirs.call(call, charge)).toMatchObject({ status: 'executed', value: { n: 2 } });
    // ...and within a tenant the key still gates it: acme's second run gets acme's result cached.
    const again = await acme.startRun({ runId: 'acme-order-2' });
    expect(await again.call(call, charge)).toMatchObject({ status: 'cached', value: { n: 1 } });
    expect(charged).toBe(2);
    // Naming acme's operation by its ledger name (`acme:charge-1`, as decisions show it) is refused,
    // a lookup or a reissue, and says nothing of whether acme has it (`acme:never` is refused alike).
    await expect(theirs.call({ ...call, operationKey: 'acme:charge-1' }, charge)).rejects.toMatchObject(
      forbidden('operation_key'),
    );
    await expect(theirs.call({ ...call, operationKey: 'acme:never' }, charge)).rejects.toMatchObject(
      forbidden('operation_key'),
    );
    await expect(
      globexOps.run('globex-order').reissue('acme:charge-1', 'globex-charge-2', { reason: 'mine' }),
    ).rejects.toMatchObject(forbidden('operation_key'));
    expect(charged).toBe(2);

    // No credential, or a signature made with another key's secret: not decided at all.
    await expect(unsigned.startRun({ runId: 'anon' })).rejects.toMatchObject({
      code: 'unauthenticated',
      details: { field: 'key_id' },
    });
    await expect(forged.run('acme-order').cancel('forged')).rejects.toMatchObject({
      code: 'unauthenticated',
      details: { field: 'signature' },
    });

    // A signature is good once, and only around the worker's clock: the same signed bytes again,
    // once their run no longer remembers the answer, are a replay; one signed 6 minutes ago expired.
    const replayRun = await acme.startRun({ runId: 'acme-replay' });
    const signedCheckpoint = (id: string, sentAtMs: number, requestId: string = randomUUID()) =>
      signRequest(
        { ...emptyRequest(requestId, 'acme-replay', 'CHECKPOINT', sentAtMs), checkpoint_id: id },
        'acme-agent',
        secret('acme-agent'),
      );
    const once = signedCheckpoint('cp-once', Date.now());
    expect(await unsigned.request(once)).toMatchObject({ decision: 'recorded', checkpoint_id: 'cp-once' });
    // While the run remembers it, the same bytes get the same answer (a client's re-send), and so
    // does a re-send signed anew, as a client's is...
    expect(await unsigned.request(once)).toMatchObject({ decision: 'recorded', checkpoint_id: 'cp-once' });
    const resent = signedCheckpoint('cp-once', Date.now() + 1, once.request_id);
    expect(resent.signature).not.toBe(once.signature);
    expect(await unsigned.request(resent)).toMatchObject({ decision: 'recorded', checkpoint_id: 'cp-once' });
    for (let i = 0; i < 17; i++) await replayRun.checkpoint(`cp-${i}`);
    // ...after it (the run keeps its latest 16 answers), neither is decided again: the re-send's
    // bytes were remembered when it was answered (they were decided again before 2026-12-03).
    for (const replayed of [once, resent])
      expect(await unsigned.request(replayed)).toMatchObject({
        decision: 'error',
        error_code: 'unauthenticated',
        error_field: 'signature',
        status: 'UNKNOWN',
      });
    expect(await unsigned.request(signedCheckpoint('cp-late', Date.now() - 6 * 60_000))).toMatchObject({
      decision: 'error',
      error_code: 'unauthenticated',
      error_field: 'sent_at_ms',
    });

    // Authority comes from the key: an agent's key cannot resume, an approver cannot sign as another.
    await run.cancel('customer asked');
    await expect(acme.resume('acme-order', { preconditionChange: 'customer is back' })).rejects.toMatchObject(
      forbidden('key_id'),
    );
    await expect(
      acmeOps.resume('acme-order', { preconditionChange: 'customer is back', approvedBy: 'the-ceo' }),
    ).rejects.toMatchObject(forbidden('approved_by'));
    const resumed = await acmeOps.resume('acme-order', { preconditionChange: 'customer is back' });
    expect(resumed.state.status).toBe('RUNNING');

    // The resume's decision and its RunResumed commit in one transaction, but the commit marker
    // reaches the runs partition a moment after the decisions one: a read_committed read of the
    // runs topic right after the answer may not see it yet, so read until it does.
    const readRun = async () =>
      Promise.all(
        (await conn.log.readKey(TOPICS.runs, 'acme-order')).map((r) =>
          conn.events.decode(TOPICS.runs, r.value),
        ),
      );
    let events = await readRun();
    for (let i = 0; i < 100 && !events.some((e) => e.event.type === 'RunResumed'); i++) {
      await new Promise((r) => setTimeout(r, 100));
      events = await readRun();
    }
    const types = events.map((e) => e.event.type);
    expect(types.filter((t) => t === 'ToolCallRequested')).toHaveLength(1);
    const replayEvents = await Promise.all(
      (await conn.log.readKey(TOPICS.runs, 'acme-replay')).map((r) =>
        conn.events.decode(TOPICS.runs, r.value),
      ),
    );
    const checkpoints = replayEvents.flatMap((e) =>
      e.event.type === 'CheckpointRecorded' ? [e.event.checkpointId] : [],
    );
    expect(checkpoints).toEqual(['cp-once', ...Array.from({ length: 17 }, (_, i) => `cp-${i}`)]);
    expect(events.find((e) => e.event.type === 'RunStarted')?.event).toMatchObject({ tenant: 'acme' });
    expect(events.find((e) => e.event.type === 'RunResumed')?.event).toMatchObject({
      approvedBy: 'acme-ops',
    });
    expect((await conn.log.readKey(TOPICS.runs, 'globex-as-acme')).length).toBe(0);
    expect((await conn.log.readKey(TOPICS.runs, 'anon')).length).toBe(0);

    expect(Object.fromEntries(worker.stats.refusals)).toEqual({
      cross_tenant: 9,
      unauthenticated: 2,
      expired: 1,
      replayed: 2,
      not_approver: 2,
    });
    const page = await worker.stats.metrics.registry.metrics();
    expect(page).toMatch(/loopguard_serve_requests_refused_total\{reason="cross_tenant"\} 9/);
    expect(page).toMatch(/loopguard_serve_requests_refused_total\{reason="replayed"\} 2/);
  }, 180_000);
});
