/**
 * What-if, the HTML timeline and the ui read Kafka as they read the embedded log: every run on the runs
 * topic, re-decided or drawn, and nothing written.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { kafkaEnv } from './setup/kafka-env.js';
import { captureIo } from './support/capture-io.js';
import { runCli } from './support/cli-run.js';

const examples = join(import.meta.dirname, '..', 'examples');
const dir = mkdtempSync(join(tmpdir(), 'lg-kwhatif-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const run = (args: string[]) => runCli(args, ENV);

/** rebuild --json output without its one timing-dependent figure. */
const withoutRate = (out: string) =>
  out
    .trim()
    .split('\n')
    .map((l) => {
      const { events_per_s: _, ...rest } = JSON.parse(l);
      return JSON.stringify(rest);
    })
    // A partitioned runs topic is met partition by partition, in no fixed order.
    .sort();

/** Workers of one cluster share the key of secret values; Kafka mode refuses to record without one. */
const ENV = { LOOPGUARD_SECRET_KEY: 'kafka-whatif-test-key' };

describe('whatif, audit --html and ui on Kafka', () => {
  it('re-decides every run on the topics without writing, draws a run as one HTML file, serves the run list', async () => {
    const { brokers, registryUrl } = kafkaEnv();
    const kafka = ['--kafka', '--brokers', brokers.join(','), '--registry', registryUrl];
    const prefixed = [...kafka, '--topic-prefix', `whatif-${randomUUID()}.`];
    const policy = join(examples, 'policy.json');
    expect((await run(['replay', join(examples, 'runs.jsonl'), '--policy', policy, ...prefixed])).code).toBe(
      0,
    );
    const before = (await run(['rebuild', '--json', ...prefixed])).out;

    const same = await run(['whatif', '--policy', policy, '--json', ...prefixed]);
    expect(same.code).toBe(0);
    expect(JSON.parse(same.out.trim().split('\n').at(-1) ?? '')).toMatchObject({ runs: 6, same: 6 });
    // On a terminal it shows its progress against the topic's record count, read from the broker.
    const tty = captureIo({ tty: true });
    expect(await main(['whatif', '--policy', policy, ...prefixed], tty, { env: ENV })).toBe(0);
    expect(tty.statusLine()).toMatch(/reading \[#{24}\] 100% ([\d,]+)\/\1 events/);
    const tight = join(dir, 'tight.json');
    writeFileSync(tight, JSON.stringify({ maxSteps: 2 }));
    const earlier = await run(['whatif', '--policy', tight, ...prefixed]);
    expect(earlier.out).toContain(
      'runs 6: would stop earlier 4, later 0, not at all 0, unchanged 2; calls saved 11',
    );
    // Nothing was appended: the rebuilt runs and event counts are what they were.
    expect(withoutRate((await run(['rebuild', '--json', ...prefixed])).out)).toEqual(withoutRate(before));

    const file = join(dir, 'ping-pong.html');
    expect((await run(['audit', 'demo/ping-pong', '--html', file, ...prefixed])).code).toBe(0);
    const html = readFileSync(file, 'utf8');
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).toContain('class="call stopped" data-call-id="step-3"');
    expect(html).toContain('short_cycle');
    expect(html).not.toMatch(/<script|<link rel="stylesheet"|src="http/);

    // The ui serves the same topics: the run list filtered by rule, and a run's timeline.
    const io = captureIo();
    const ctl = new AbortController();
    const serving = main(['ui', '--port', '0', ...prefixed], io, { env: ENV, signal: ctl.signal });
    const end = Date.now() + 20_000;
    let url: string | undefined;
    while (url === undefined && Date.now() < end) {
      url = /ui: (http:\S+) /.exec(io.stderr())?.[1];
      if (url === undefined) await new Promise((r) => setTimeout(r, 50));
    }
    try {
      const list = await (await fetch(`${url}/?rule=exact_repeat`)).text();
      expect(list).toContain('1 of 6 runs');
      const page = await (await fetch(`${url}/run?id=${encodeURIComponent('demo/ping-pong')}`)).text();
      expect(page).toContain('class="call stopped" data-call-id="step-3"');
    } finally {
      ctl.abort();
    }
    expect(await serving).toBe(0);
  });
});
