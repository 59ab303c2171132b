/**
 * `loopguard serve --metrics-port 0` names the port it got (it printed `:0` before), serves
 * /metrics there, and the first SIGTERM ends it.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { kafkaEnv } from './setup/kafka-env.js';
import { type ServeProcess, spawnServe } from './support/service/serve-process.js';

let worker: ServeProcess | undefined;
afterEach(() => {
  worker?.child.kill('SIGKILL');
  worker = undefined;
});

describe('loopguard serve --metrics-port 0', () => {
  it('prints the port it listens on, serves /metrics there, and stops on the first SIGTERM', async () => {
    const { brokers, registryUrl } = kafkaEnv();
    const w = spawnServe({
      brokers,
      registryUrl,
      topicPrefix: `metrics0-${randomUUID().slice(0, 8)}`,
      group: `g-${randomUUID()}`,
      partitions: 1,
      metricsPort: 0,
    });
    worker = w;
    await w.waitFor(/serve: metrics on http:\/\/\S+:\d+\/metrics/);
    const port = Number(/serve: metrics on http:\/\/\S+:(\d+)\/metrics/.exec(w.log())?.[1]);
    expect(port).toBeGreaterThan(0);
    const scraped = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(scraped).toContain('loopguard_serve_requests_decided_total');
    await w.waitFor(/assigned partitions/);
    w.child.kill('SIGTERM');
    expect(await w.exited).toBe(0);
  }, 120_000);
});
