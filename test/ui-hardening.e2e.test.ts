/**
 * `loopguard ui` under a hostile web page and a large log: only its own host names are answered
 * (DNS rebinding), every page forbids scripts and sniffing, the run list is paged from the store's
 * run index (a filtered page from a kept index that reads only what was appended since the last
 * one), and work stops when the client leaves.
 */

import { writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openEmbeddedStore } from '../src/cli/open-store.js';
import { startUiServer, type UiSource } from '../src/cli/ui-server.js';
import type { RecordedEvent } from '../src/domain/index.js';
import { TOPICS } from '../src/log/index.js';
import { runCli, tempDirs } from './support/cli-run.js';

const tmp = tempDirs('lg-ui-hard-');

function get(
  url: string,
  host?: string,
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: u.hostname, port: u.port, path: `${u.pathname}${u.search}`, headers: host ? { host } : {} },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          body += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** A data dir with `n` one-call runs, replayed by the CLI. */
async function dataDirWith(n: number): Promise<string> {
  const dir = tmp();
  const trace = join(dir, 'runs.jsonl');
  const lines = Array.from({ length: n }, (_, i) =>
    JSON.stringify({
      run_id: `r${String(i).padStart(5, '0')}`,
      outcome: { success: true },
      calls: [
        { step: 0, tool: 'search', args: { q: i }, result: 'x', result_sha256: 'h', after_user_turn: true },
      ],
    }),
  );
  writeFileSync(trace, `${lines.join('\n')}\n`);
  const data = join(dir, 'data');
  expect((await runCli(['replay', trace, '--data-dir', data])).code).toBe(0);
  return data;
}

/** The ui over `data`, counting the records it reads from the log. */
async function uiOver(data: string, allowHosts: string[] = []) {
  const store = await openEmbeddedStore(data, { readOnly: true });
  let read = 0;
  const index = store.runIndex;
  if (index === undefined) throw new Error('the embedded store has a run index');
  const source: UiSource = {
    scan: (apply) => store.scan(apply),
    entries: async function* (offset: number) {
      for await (const e of store.events.entries(TOPICS.runs, offset)) {
        read++;
        yield e as { offset: number; event: RecordedEvent };
      }
    },
    runs: {
      page: (offset, limit) => index.page(offset, limit),
      events: async (runId) => {
        const events = await store.stream.readStream(runId);
        read += events.length;
        return events;
      },
    },
  };
  const ui = await startUiServer(source, 0, '127.0.0.1', { allowHosts });
  return {
    url: ui.url,
    read: () => read,
    close: async () => {
      await ui.close();
      await store.close();
    },
  };
}

describe('loopguard ui, hardened', () => {
  it('answers only its own host names, and sends CSP and nosniff', async () => {
    const ui = await uiOver(await dataDirWith(3), ['loopguard.internal']);
    try {
      const port = new URL(ui.url).port;
      expect((await get(`${ui.url}/`, `127.0.0.1:${port}`)).status).toBe(200);
      expect((await get(`${ui.url}/`, `localhost:${port}`)).status).toBe(200);
      expect((await get(`${ui.url}/`, `loopguard.internal:${port}`)).status).toBe(200);
      // A rebinding page: its own name, resolved to 127.0.0.1.
      const rebound = await get(`${ui.url}/`, `attacker.example:${port}`);
      expect(rebound.status).toBe(421);
      expect(rebound.body).not.toContain('r00000');
      expect((await get(`${ui.url}/run?id=r00000`, 'attacker.example')).status).toBe(421);
      const ok = await get(`${ui.url}/run?id=r00000`);
      expect(ok.headers['content-security-policy']).toMatch(/default-src 'none'/);
      expect(ok.headers['content-security-policy']).not.toMatch(/script-src/);
      expect(ok.headers['x-content-type-options']).toBe('nosniff');
    } finally {
      await ui.close();
    }
  }, 60_000);

  it("pages the run list: unfiltered, only the page's runs are read; filtered, only what is new", async () => {
    const ui = await uiOver(await dataDirWith(250));
    try {
      const first = await get(`${ui.url}/?limit=100`);
      expect(first.body).toContain('250 of 250 runs; 1-100 shown');
      expect(first.body).toContain('data-run-id="r00099"');
      expect(first.body).not.toContain('data-run-id="r00100"');
      // The page's 100 runs (a few events each), not the 250.
      expect(ui.read()).toBeGreaterThanOrEqual(100);
      expect(ui.read()).toBeLessThan(1000);
      const state = /data-run-id="r00000"><td>.*?class="badge state-([A-Z_]+)"/.exec(
        first.body,
      )?.[1] as string;
      const filtered = await get(`${ui.url}/?limit=100&state=${state}`);
      expect(filtered.body).toContain('250 of 250 runs; 1-100 shown');
      const readOnce = ui.read();
      const last = await get(`${ui.url}/?limit=100&offset=200&state=${state}`);
      expect(last.body).toContain('201-250 shown');
      expect(last.body).toContain('rel="prev"');
      expect(last.body).not.toContain('rel="next"');
      expect(last.body).toContain('data-run-id="r00249"');
      // Nothing was appended: the second filtered page read no record again.
      expect(ui.read()).toBe(readOnce);
      expect((await get(`${ui.url}/?limit=0`)).status).toBe(400);
      expect((await get(`${ui.url}/?offset=-1`)).status).toBe(400);
    } finally {
      await ui.close();
    }
  }, 60_000);

  it('stops the scan of a list page whose client left, and serves the next page at once', async () => {
    // Without offsets (as on Kafka) a page scans the log; this one is slow, a record each 5 ms.
    const store = await openEmbeddedStore(await dataDirWith(300), { readOnly: true });
    const all: RecordedEvent[] = [];
    await store.scan((r) => all.push(r));
    await store.close();
    let read = 0;
    let delayMs = 5;
    const source: UiSource = {
      scan: async (apply) => {
        for (const r of all) {
          if (delayMs > 0) await new Promise((done) => setTimeout(done, delayMs));
          read++;
          apply(r);
        }
        return all.length;
      },
    };
    const ui = await startUiServer(source, 0);
    try {
      const u = new URL(ui.url);
      const left = request({ host: u.hostname, port: u.port, path: '/' });
      left.on('error', () => undefined);
      left.end();
      while (read < 50) await new Promise((done) => setTimeout(done, 5));
      left.destroy();
      // Running, the scan reads about 40 records in 200 ms: still for 200 ms, it stopped.
      let atLeave = -1;
      for (let i = 0; i < 50 && atLeave !== read; i++) {
        atLeave = read;
        await new Promise((done) => setTimeout(done, 200));
      }
      expect(read).toBe(atLeave);
      expect(read).toBeLessThan(all.length);
      delayMs = 0;
      const next = await get(`${ui.url}/`);
      expect(next.status).toBe(200);
      expect(next.body).toContain('300 of 300 runs');
      expect(read).toBe(atLeave + all.length);
    } finally {
      await ui.close();
    }
  }, 60_000);
});
