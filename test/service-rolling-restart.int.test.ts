import { afterEach, describe, expect, it } from 'vitest';
import { createRemoteGuard } from '../src/client/index.js';
import { rebuiltRuns } from './support/service/rebuilt-runs.js';
import { balanced, SERVICE_SECRET_KEY, serveGroup } from './support/service/serve-process.js';
import { decisionCounts, readServiceTopics } from './support/service/service-topics-read.js';
import { within } from './support/until.js';

const RUNS = 200;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

describe('loopguard serve: rolling restart', () => {
  it('replaces all three workers under load and loses nothing', async () => {
    const { brokers, registryUrl, prefix, start } = serveGroup('roll', cleanups);
    const first = start();
    await first.waitFor(/ in group /);
    let live = [first, start(), start()];
    await balanced(live, 6);
    const guard = await createRemoteGuard({
      secretKey: SERVICE_SECRET_KEY,
      brokers,
      registry: registryUrl,
      topicPrefix: prefix,
      timeoutMs: 60_000,
    });
    cleanups.push(() => guard.close());

    let restarting = true;
    const calls = new Map<string, number>();
    // Each run's page in flight, for the failure message of a run that never ends.
    const paging = new Map<string, string>();
    const retired: typeof live = [];
    const everyLog = () =>
      [...live, ...retired].map((w) => `--- worker ${w.pid}:\n${w.log().slice(-1500)}`).join('\n');
    const load = Promise.all(
      Array.from({ length: RUNS }, async (_, i) => {
        const runId = `run-${i}`;
        const run = await guard.startRun({ runId });
        let page = 0;
        // Paging: every call is new information, so the guard lets the run go on for as long as it pages.
        while (restarting || page < 3) {
          paging.set(runId, `page ${++page}`);
          const r = await run.call({ tool: 'list', args: { page } }, () => ({ page }));
          expect(r.status).toBe('executed');
        }
        calls.set(runId, page);
        paging.set(runId, 'finish');
        const end = await run.finish({ verified: true });
        paging.delete(runId);
        return end;
      }),
    );
    for (const old of [...live]) {
      const fresh = start();
      await balanced([...live, fresh], 6);
      old.child.kill('SIGTERM');
      expect(
        await within(`worker ${old.pid} to exit on SIGTERM`, old.exited, { ms: 60_000, log: old.log }),
      ).toBe(0);
      retired.push(old);
      live = [...live.filter((w) => w !== old), fresh];
      await balanced(live, 6);
    }
    restarting = false;
    const ends = await within('every run to end', load, {
      ms: 120_000,
      log: () =>
        `runs still paging: ${JSON.stringify([...paging].slice(0, 20))} (${paging.size})\n${everyLog()}`,
    });
    expect(ends.every((s) => s.status === 'COMPLETED')).toBe(true);

    const topics = await readServiceTopics(brokers, registryUrl, prefix);
    const total = [...calls.values()].reduce((a, b) => a + b, 0);
    expect(topics.requests.length).toBe(RUNS * 2 + total * 2);
    expect([...decisionCounts(topics).values()].filter((n) => n !== 1)).toEqual([]);

    const rebuilt = await rebuiltRuns(prefix);
    expect(rebuilt).toHaveLength(RUNS);
    for (const r of rebuilt)
      expect(r).toMatchObject({ terminal_state: 'COMPLETED', calls_executed: calls.get(r.run_id) });
    console.log(`rolling restart: ${total} calls in ${RUNS} runs across 3 replacements`);
  }, 300_000);
});
