/**
 * A remote run recovers after a `decision_timeout`. The worker is down while a call waits: the
 * step re-sends the same request id and the worker, once back, answers it once; a step that gave
 * up leaves its request to be sent again before the run's next (a call the worker let run is closed
 * as not run); and a CANCEL from a handle that knows nothing of it ends a run with a call in flight
 * (a side effect in doubt: NEEDS_HUMAN), never `call_in_flight` for good.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createRemoteGuard } from '../src/client/index.js';
import { TOPICS } from '../src/log/event-log.js';
import { GuardWorker } from '../src/service/guard-worker.js';
import { kafkaEnv } from './setup/kafka-env.js';
import { inProcessService } from './support/service/in-process-service.js';
import { SERVICE_SECRET_KEY } from './support/service/serve-process.js';
import { readServiceTopics } from './support/service/service-topics-read.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

describe('loopguard serve: a remote run after a decision_timeout', () => {
  it('is answered once on a re-send, closes a call it never ran, and can always be cancelled', async () => {
    const { brokers, registryUrl } = kafkaEnv();
    const { topicPrefix, conn, worker } = await inProcessService('timeout', cleanups);
    const group = `g-${topicPrefix}`;
    const restart = async (id: string) => {
      const w = await GuardWorker.start({
        ...conn,
        secretKey: SERVICE_SECRET_KEY,
        groupId: group,
        workerId: id,
      });
      cleanups.push(() => w.stop());
      return w;
    };
    const client = async (timeoutMs: number, resends: number) => {
      const g = await createRemoteGuard({
        secretKey: SERVICE_SECRET_KEY,
        brokers,
        registry: registryUrl,
        topicPrefix,
        timeoutMs,
        resends,
      });
      cleanups.push(() => g.close());
      return g;
    };
    const patient = await client(3_000, 20);
    const hasty = await client(1_000, 0);
    // Started by the patient client: a first decision under load can take longer than the hasty
    // client's 1 s (CI saw it), and the test is about what follows a timeout, not the start.
    const ids = ['t-resend', 't-gave-up', 't-orphan'];
    await Promise.all(ids.map((id) => patient.startRun({ runId: id })));
    const runs = ids.map((id) => hasty.run(id));
    await worker.stop();

    let ran = 0;
    const tool = async () => {
      ran++;
      return { ok: ran };
    };
    // 1. Re-sent until the worker is back: executed once.
    const waiting = patient.run('t-resend').call({ tool: 'search', args: { q: 'a' } }, tool);
    // 2. Gives up (no re-send): its call is decided later, while the client has moved on.
    const gaveUp = runs[1]?.call({ tool: 'search', args: { q: 'b' } }, tool);
    await expect(gaveUp).rejects.toMatchObject({ code: 'decision_timeout' });
    // 3. A side effect asked by a client that then crashed: only its run id is known elsewhere.
    const orphan = runs[2]?.call(
      { tool: 'charge', args: { amount: 5 }, operationKey: 'charge-t', sideEffect: true },
      tool,
    );
    await expect(orphan).rejects.toMatchObject({ code: 'decision_timeout' });
    const back = await restart('w-timeout-2');

    expect(await waiting).toMatchObject({ status: 'executed', value: { ok: 1 } });
    // The run that gave up: its next step learns the call was let run, closes it as not run, goes on.
    const cancelled = await runs[1]?.cancel('user left');
    expect(cancelled?.status).toBe('PARTIAL');
    // A fresh handle on the orphan's run: the cancel closes the call in flight, in doubt.
    const ended = await patient.run('t-orphan').cancel('agent crashed');
    expect(ended.status).toBe('NEEDS_HUMAN');
    expect(ran).toBe(1);
    await back.stop();

    const types = async (runId: string) =>
      (
        await Promise.all(
          (await conn.log.readKey(TOPICS.runs, runId)).map((r) => conn.events.decode(TOPICS.runs, r.value)),
        )
      ).map((e) => e.event);
    const resent = await types('t-resend');
    expect(resent.filter((e) => e.type === 'ToolCallRequested')).toHaveLength(1);
    const gave = await types('t-gave-up');
    expect(gave.find((e) => e.type === 'ToolCallCompleted')).toMatchObject({
      kind: 'RETRYABLE',
      code: 'not_run',
    });
    expect(gave.at(-1)).toMatchObject({ type: 'RunStopped' });
    const orphaned = await types('t-orphan');
    expect(orphaned.find((e) => e.type === 'ToolCallCompleted')).toMatchObject({
      code: 'cancelled_in_flight',
    });
    expect(orphaned.some((e) => e.type === 'OperationInDoubt')).toBe(true);

    // Each request id got the same answer however often it was published.
    const { decisions } = await readServiceTopics(brokers, registryUrl, topicPrefix);
    const byId = new Map<string, Set<string>>();
    for (const d of decisions) byId.set(d.request_id, (byId.get(d.request_id) ?? new Set()).add(d.decision));
    for (const answers of byId.values()) expect(answers.size).toBe(1);
  }, 180_000);
});
