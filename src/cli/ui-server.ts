import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RecordedEvent } from '../domain/index.js';
import { type Projections, RunTimelineFold } from '../projections/index.js';
import { esc, page } from '../timeline/html.js';
import { type RunFilters, runListPage, runListRows } from '../timeline/run-list-page.js';
import { runPage } from '../timeline/run-page.js';

/** What the ui reads: the log it was pointed at, folded afresh for every page so it is never stale. */
export interface UiSource {
  rebuild(): Promise<Projections>;
  scan(apply: (rec: RecordedEvent) => void): Promise<number>;
}

export interface UiServer {
  readonly url: string;
  close(): Promise<void>;
}

const runHref = (runId: string) => `/run?id=${encodeURIComponent(runId)}`;

function filters(q: URLSearchParams): RunFilters {
  // The form sends "" for "any".
  const pick = (k: keyof RunFilters) => {
    const v = q.get(k);
    return v ? { [k]: v } : {};
  };
  return { ...pick('state'), ...pick('rule'), ...pick('tenant') };
}

async function respond(source: UiSource, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://ui');
  const send = (status: number, html: string) => {
    res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(html);
  };
  if (req.method !== 'GET') return send(405, page('loopguard', '<p>read-only: GET only</p>'));
  if (url.pathname === '/') {
    const rows = runListRows(await source.rebuild());
    return send(200, runListPage(rows, filters(url.searchParams), runHref));
  }
  if (url.pathname === '/run') {
    const id = url.searchParams.get('id') ?? '';
    const fold = new RunTimelineFold(id);
    await source.scan((rec) => fold.apply(rec));
    const t = fold.timeline();
    if (t === undefined)
      return send(404, page('loopguard', `<p>No run <code>${esc(id)}</code>. <a href="/">All runs</a></p>`));
    return send(200, runPage(t, { backHref: '/' }));
  }
  send(404, page('loopguard', '<p>Not found. <a href="/">All runs</a></p>'));
}

/** Serves the run list and each run's timeline, read-only, on `host:port` (port 0: any free port). */
export function startUiServer(source: UiSource, port: number, host = '127.0.0.1'): Promise<UiServer> {
  const server = createServer((req, res) => {
    respond(source, req, res).catch((e: unknown) => {
      res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(`loopguard ui: ${e instanceof Error ? e.message : String(e)}`);
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const a = server.address() as AddressInfo;
      resolve({
        url: `http://${host}:${a.port}`,
        close: () => new Promise((done) => server.close(() => done())),
      });
    });
  });
}
