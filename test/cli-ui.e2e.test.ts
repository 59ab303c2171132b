/**
 * `loopguard ui` as the command: serves the run list and timelines read-only until its signal,
 * with an opt-in /metrics port.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { captureIo } from './support/capture-io.js';
import { until } from './support/until.js';

const examples = join(import.meta.dirname, '..', 'examples');
const dir = mkdtempSync(join(tmpdir(), 'lg-cli-ui-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The status of GET url sent with this Host header (fetch cannot set one). */
const statusWithHost = (url: string, host: string): Promise<number | undefined> =>
  new Promise((resolve, reject) => {
    const req = request(url, { headers: { host } }, (res) => {
      res.resume();
      resolve(res.statusCode);
    });
    req.on('error', reject);
    req.end();
  });

describe('loopguard ui', () => {
  it('serves the runs, a timeline, 404 for an unknown run, refuses writes, and /metrics when asked', async () => {
    const data = join(dir, 'data');
    const replay = ['replay', join(examples, 'runs.jsonl'), '--policy', join(examples, 'policy.json')];
    expect(await main([...replay, '--data-dir', data], captureIo(), { env: {} })).toBe(0);

    const io = captureIo();
    const ctl = new AbortController();
    const running = main(['ui', '--port', '0', '--metrics-port', '0', '--data-dir', data], io, {
      env: {},
      signal: ctl.signal,
    });
    const [ui, metrics] = await until(
      'the urls',
      () => {
        const m = /ui: (http:\S+) .*metrics on (http:\S+);/.exec(io.stderr());
        return m ? [m[1] as string, m[2] as string] : undefined;
      },
      { ms: 10_000, every: 25 },
    );
    try {
      const list = await fetch(`${ui}/?rule=short_cycle`);
      expect(list.status).toBe(200);
      const html = await list.text();
      expect(html).toContain('1 of 6 runs');
      expect(html).toContain('data-run-id="demo/ping-pong"');
      const timeline = await fetch(`${ui}/run?id=${encodeURIComponent('demo/ping-pong')}`);
      expect(await timeline.text()).toContain('short_cycle');
      expect((await fetch(`${ui}/run?id=nope`)).status).toBe(404);
      expect((await fetch(ui, { method: 'POST' })).status).toBe(405);
      const scraped = await (await fetch(metrics)).text();
      expect(scraped).toContain('# TYPE loopguard_decisions_total counter');
      expect(scraped).toContain('process_cpu_user_seconds_total');
    } finally {
      ctl.abort();
    }
    expect(await running).toBe(0);
  });

  it('answers a Host named by --allow-host (repeatable), and still no other', async () => {
    const data = join(dir, 'allow-host');
    const replay = ['replay', join(examples, 'runs.jsonl'), '--policy', join(examples, 'policy.json')];
    expect(await main([...replay, '--data-dir', data], captureIo(), { env: {} })).toBe(0);
    const io = captureIo();
    const ctl = new AbortController();
    const args = [
      'ui',
      '--port',
      '0',
      '--allow-host',
      'box.local',
      '--allow-host',
      'Other.Lan',
      '--data-dir',
      data,
    ];
    const running = main(args, io, { env: {}, signal: ctl.signal });
    const ui = await until('the url', () => /ui: (http:\S+) /.exec(io.stderr())?.[1], {
      ms: 10_000,
      every: 25,
    });
    try {
      expect(await statusWithHost(ui, 'box.local')).toBe(200);
      expect(await statusWithHost(ui, 'other.lan')).toBe(200);
      expect(await statusWithHost(ui, 'rebound.example')).toBe(421);
    } finally {
      ctl.abort();
    }
    expect(await running).toBe(0);
  });

  it('rejects a port that is not one, naming the flag', async () => {
    await expect(
      main(['ui', '--port', '70000', '--data-dir', dir], captureIo(), { env: {} }),
    ).rejects.toThrow(/--port must be a port number/);
  });
});
