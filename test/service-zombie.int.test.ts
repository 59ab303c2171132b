import { afterEach, describe, expect, it } from 'vitest';
import { createRemoteGuard, type RemoteRun } from '../src/client/index.js';
import { TOPICS } from '../src/log/event-log.js';
import { openService } from '../src/service/open-service.js';
import { balanced, SERVICE_SECRET_KEY, serveGroup } from './support/service/serve-process.js';
import { decisionCounts, readServiceTopics } from './support/service/service-topics-read.js';

const RUNS = 60;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

describe('loopguard serve: a zombie worker', () => {
  it('writes nothing once fenced', async () => {
    const { brokers, registryUrl, prefix, start } = serveGroup('zombie', cleanups);
    const a = start();
    await a.waitFor(/ in group /);
    const b = start();
    await balanced([a, b], 6);
    const guard = await createRemoteGuard({
      secretKey: SERVICE_SECRET_KEY,
      brokers,
      registry: registryUrl,
      topicPrefix: prefix,
      // A decision lost for good fails the call (decision_timeout, naming it) well inside the
      // test's budget, with both workers' logs below, instead of a bare test timeout.
      timeoutMs: 40_000,
      resends: 1,
    });
    cleanups.push(() => guard.close());
    const runs: RemoteRun[] = await Promise.all(
      Array.from({ length: RUNS }, (_, i) => guard.startRun({ runId: `run-${i}` })),
    );
    let pages = 0;
    let frozen = false;
    const load = Promise.all(
      runs.map(async (run) => {
        for (let page = 1; page <= 8; page++) {
          const r = await run.call({ tool: 'list', args: { page } }, () => ({ page }));
          expect(r.status).toBe('executed');
          if (++pages === RUNS * 2 && !frozen) {
            frozen = true;
            a.child.kill('SIGSTOP');
          }
        }
      }),
    );
    // b gets every partition once the session timeout has passed and fences each at once; only
    // then is a woken, so whatever it still holds is certainly stale. Other lines may come between
    // the six fenced ones (a retried batch's, say), but no other assignment; each line is taken by
    // one branch only.
    const fenced = /partition \d: fenced/.source;
    const other = `\\n(?!.*(?:${fenced}|assigned partitions)).*`;
    await b.waitFor(
      new RegExp(`assigned partitions \\[0,1,2,3,4,5\\](?:${other})*(?:\\n.*${fenced}.*(?:${other})*){6}`),
      60_000,
    );
    a.child.kill('SIGCONT');
    await load.catch((e: unknown) => {
      const tail = (w: typeof a, name: string) => `--- worker ${name}:\n${w.log().slice(-6000)}`;
      throw new Error(`${e instanceof Error ? e.message : String(e)}\n${tail(a, 'a')}\n${tail(b, 'b')}`, {
        cause: e,
      });
    });
    for (const run of runs) await run.finish({ verified: true });
    // Give the woken zombie time to try committing what it held.
    await new Promise((r) => setTimeout(r, 3_000));

    const topics = await readServiceTopics(brokers, registryUrl, prefix);
    expect(topics.requests).toHaveLength(RUNS * (1 + 16 + 1));
    expect([...decisionCounts(topics).values()].filter((n) => n !== 1)).toEqual([]);
    for (const run of runs) {
      const seqs = topics.decisions.filter((d) => d.run_id === run.runId).map((d) => d.seq);
      expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
      expect(new Set(seqs).size).toBe(seqs.length);
    }
    // The committed runs topic holds each run's events once, seq after seq.
    const conn = await openService({ brokers, registryUrl, topicPrefix: prefix });
    cleanups.push(() => conn.close());
    const bySeq = new Map<string, number[]>();
    for (const r of await conn.log.readAll(TOPICS.runs)) {
      const e = await conn.events.decode(TOPICS.runs, r.value);
      bySeq.set(e.runId, [...(bySeq.get(e.runId) ?? []), e.seq]);
    }
    for (const [, seqs] of bySeq) expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    console.log(
      `zombie: ${a.log().match(/transaction aborted/g)?.length ?? 0} of its transactions were refused after it woke`,
    );
  }, 180_000);
});
