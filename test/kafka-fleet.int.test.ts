/**
 * Fleet loop alerts on the real broker: `fleet --kafka` detects the loop six runs share and
 * publishes it once on the stops topic; `alert --kafka` delivers it like a stop.
 */

import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { openKafkaStore } from '../src/cli/open-kafka-store.js';
import { TOPICS } from '../src/log/event-log.js';
import { AFTER_HEADER, BATCH_HEADER } from '../src/log/kafka/run-batch-fold.js';
import { kafkaEnv } from './setup/kafka-env.js';
import { captureIo } from './support/capture-io.js';
import { writeLoopingFleet } from './support/looping-fleet.js';
import { until } from './support/until.js';

const dir = mkdtempSync(join(tmpdir(), 'lg-kfleet-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function kafkaArgs(prefix: string): string[] {
  const { brokers, registryUrl } = kafkaEnv();
  return ['--kafka', '--brokers', brokers.join(','), '--registry', registryUrl, '--topic-prefix', prefix];
}

async function run(args: string[], signal?: AbortSignal) {
  const io = captureIo();
  const code = await main(args, io, { env: ENV, ...(signal ? { signal } : {}) });
  return { code, out: io.stdout(), err: io.stderr(), io };
}

/** Workers of one cluster share the key of secret values; Kafka mode refuses to record without one. */
const ENV = { LOOPGUARD_SECRET_KEY: 'kafka-fleet-test-key' };

describe('loopguard fleet --kafka', () => {
  it('publishes the detection once, and alert delivers it with the stops', async () => {
    const kafka = kafkaArgs(`fleet-${randomUUID()}.`);
    expect((await run(['replay', writeLoopingFleet(dir, 6), ...kafka])).code).toBe(0);

    const first = await run(['fleet', '--json', ...kafka]);
    expect(first.code).toBe(0);
    expect(first.err).toContain('1 fleet loops detected, 1 newly published');
    const detection = JSON.parse(first.out.trim());
    expect(detection).toMatchObject({
      kind: 'fleet_loop',
      tool: 'search_docs',
      rule: 'exact_repeat',
      tenants: ['acme', 'globex'],
    });
    expect(detection.runs).toHaveLength(5);
    expect((await run(['fleet', ...kafka])).err).toContain('0 newly published');

    const io = captureIo();
    const ctl = new AbortController();
    const alerting = main(['alert', '--group', `g-${randomUUID()}`, ...kafka], io, {
      env: {},
      signal: ctl.signal,
    });
    const end = Date.now() + 30_000;
    // Seven stop reports and the one detection.
    while (io.stdout().trim().split('\n').length < 8 && Date.now() < end)
      await new Promise((r) => setTimeout(r, 100));
    ctl.abort();
    expect(await alerting).toBe(0);
    const alerts = io
      .stdout()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(alerts).toHaveLength(8);
    expect(alerts.filter((a) => a.kind === 'fleet_loop')).toEqual([detection]);
  });

  it('--follow publishes a loop as the runs that make it arrive, and a restarted watcher repeats nothing', async () => {
    const kafka = kafkaArgs(`fleet-follow-${randomUUID()}.`);
    const group = ['--group', `fleet-${randomUUID()}`];
    expect((await run(['replay', writeLoopingFleet(dir, 4), ...kafka])).code).toBe(0);

    const watch = async (waitFor: (out: string) => boolean, then: () => Promise<void> = async () => {}) => {
      const io = captureIo();
      const ctl = new AbortController();
      const watching = main(['fleet', '--follow', '--json', ...group, ...kafka], io, {
        env: {},
        signal: ctl.signal,
      });
      await until('the watcher', () => io.stderr().includes('fleet: watching'));
      await then();
      await until('its output', () => waitFor(io.stdout()));
      ctl.abort();
      expect(await watching).toBe(0);
      return io.stdout();
    };
    // Four runs are below the threshold; the fifth and sixth arrive while it watches.
    const out = await watch(
      (o) => o.includes('fleet_loop'),
      async () => {
        expect((await run(['replay', writeLoopingFleet(dir, 2, 4), ...kafka])).code).toBe(0);
      },
    );
    const [detection, ...more] = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(more).toEqual([]);
    // The runs topic has partitions, read in no fixed interleaving: any five of the six runs.
    const six = Array.from({ length: 6 }, (_, i) => `fleet/loop-${i}`);
    expect(new Set(detection.runs).size).toBe(5);
    expect(detection.runs.every((r: string) => six.includes(r))).toBe(true);

    // Restarted in its group: it resumes at its offsets and knows what it published.
    let waited = false;
    setTimeout(() => {
      waited = true;
    }, 3000);
    expect(await watch(() => waited)).toBe('');
    const stops = (await run(['stops', '--json', ...kafka])).out.trim().split('\n');
    expect(stops.filter((l) => l.includes('"kind":"fleet_loop"'))).toHaveLength(1);
  });

  it("--follow counts what the run's stream counts: a losing writer's batch makes no fleet loop", async () => {
    const prefix = `fleet-lost-${randomUUID()}.`;
    const kafka = kafkaArgs(prefix);
    expect((await run(['replay', writeLoopingFleet(dir, 4), ...kafka])).code).toBe(0);
    // A fifth looping run that only a losing writer wrote: the winner recorded its start alone,
    // the loser's batch (expecting the run empty) holds the whole loop.
    const { brokers, registryUrl } = kafkaEnv();
    const store = await openKafkaStore({ brokers, registryUrl, topicPrefix: prefix });
    try {
      const ghost = 'fleet/ghost';
      const loop = (await store.stream.readStream('fleet/loop-3')).map((e) => ({
        ...e,
        runId: ghost,
        eventId: `${ghost}/${e.seq}`,
      }));
      await store.stream.appendToStream(ghost, loop.slice(0, 1), { expectedStreamVersion: 0 });
      const headers = { [AFTER_HEADER]: '0', [BATCH_HEADER]: `loser-${ghost}` };
      await store.log.append(
        TOPICS.runs,
        loop.map((e) => store.events.runRecord(e, headers)),
      );
    } finally {
      await store.close();
    }
    const io = captureIo();
    const ctl = new AbortController();
    const watching = main(['fleet', '--follow', '--json', '--group', `fleet-${randomUUID()}`, ...kafka], io, {
      env: {},
      signal: ctl.signal,
    });
    await until('the watcher', () => io.stderr().includes('fleet: watching'));
    // The real fifth run makes the loop; the ghost must be in no detection.
    expect((await run(['replay', writeLoopingFleet(dir, 1, 4), ...kafka])).code).toBe(0);
    await until('a detection', () => io.stdout().includes('fleet_loop'));
    ctl.abort();
    expect(await watching).toBe(0);
    const detections = io
      .stdout()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(detections.length).toBeGreaterThan(0);
    for (const d of detections) expect(d.runs).not.toContain('fleet/ghost');
  });
});
