import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RunTimelineFold } from '../projections/index.js';
import { esc, page } from '../timeline/html.js';
import { RunListFold } from '../timeline/run-list-fold.js';
import { Abandoned, RunListIndex, type RunListSource } from '../timeline/run-list-index.js';
import {
  DEFAULT_PAGE,
  MAX_PAGE_LIMIT,
  type RunFilters,
  type RunListView,
  type RunPaging,
  runListPage,
  viewOf,
} from '../timeline/run-list-page.js';
import { runPage } from '../timeline/run-page.js';

/** What the ui reads: the log it was pointed at, so a page is never stale. */
export type UiSource = RunListSource;

export interface UiServer {
  readonly url: string;
  close(): Promise<void>;
}

/**
 * No script at all, styles only inline (the pages' own), images only data: (the icon), forms only
 * to itself, never framed: a recorded name that slipped past the escaping still cannot run.
 */
const HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'content-security-policy':
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

const LOCAL_HOSTS = ['127.0.0.1', 'localhost', '[::1]'];

/** The Host header's name without its port, lower case; null when there is none. */
function hostName(header: string | undefined): string | null {
  if (header === undefined || header === '') return null;
  const h = header.toLowerCase();
  if (h.startsWith('[')) return h.slice(0, h.indexOf(']') + 1);
  const colon = h.lastIndexOf(':');
  return colon < 0 ? h : h.slice(0, colon);
}

function filters(q: URLSearchParams): RunFilters {
  // The form sends "" for "any".
  const pick = (k: keyof RunFilters) => {
    const v = q.get(k);
    return v ? { [k]: v } : {};
  };
  return { ...pick('state'), ...pick('rule'), ...pick('tenant') };
}

/** limit (1 to 1000, default 100) and offset (>= 0) from the query; null when one is not a number there. */
function paging(q: URLSearchParams): RunPaging | null {
  const int = (k: string, fallback: number) => {
    const v = q.get(k);
    if (v === null || v === '') return fallback;
    return /^\d{1,9}$/.test(v) ? Number(v) : Number.NaN;
  };
  const limit = int('limit', DEFAULT_PAGE.limit);
  const offset = int('offset', DEFAULT_PAGE.offset);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_LIMIT || !Number.isInteger(offset))
    return null;
  return { limit, offset };
}

/**
 * An unfiltered page from the store's run index: the page's run ids, each run folded from its own
 * events. Its cost is the page's runs, whatever the log holds.
 */
async function indexedPage(
  runs: NonNullable<UiSource['runs']>,
  p: RunPaging,
  signal: AbortSignal,
): Promise<RunListView> {
  const { total, runIds } = await runs.page(p.offset, p.limit);
  const fold = new RunListFold();
  for (const id of runIds) {
    if (signal.aborted) throw new Abandoned('the client went away');
    for (const rec of await runs.events(id)) fold.apply(rec);
  }
  return { rows: fold.rows(), matching: total, total };
}

/**
 * A filtered page from the store's run rows: which runs match and how many, then each of the
 * page's runs folded from its own events; null when the store's rows cannot say (none, or behind
 * the log), and the kept index answers instead.
 */
async function rowsPage(
  runs: NonNullable<UiSource['runs']>,
  f: RunFilters,
  p: RunPaging,
  signal: AbortSignal,
): Promise<RunListView | null> {
  const found = await runs.filtered?.(f, p.offset, p.limit);
  if (found === undefined || found === null) return null;
  const fold = new RunListFold();
  for (const events of found.runs) {
    if (signal.aborted) throw new Abandoned('the client went away');
    for (const rec of events) fold.apply(rec);
  }
  return { rows: fold.rows(), matching: found.matching, total: found.total };
}

async function respond(
  source: UiSource,
  index: RunListIndex,
  allowed: ReadonlySet<string>,
  req: IncomingMessage,
  res: ServerResponse,
  signal: AbortSignal,
): Promise<void> {
  const send = (status: number, html: string) => {
    if (signal.aborted) return;
    res.writeHead(status, HEADERS);
    res.end(html);
  };
  /** A page that only says `text`: a refusal, or what is not there. */
  const say = (status: number, text: string) => send(status, page('loopguard', `<p>${text}</p>`));
  // DNS rebinding: a web page's script reaching 127.0.0.1 under its own name is refused.
  const host = hostName(req.headers.host);
  if (host === null || !allowed.has(host))
    return say(421, 'This server answers only to the host names it was started for.');
  const url = new URL(req.url ?? '/', 'http://ui');
  if (req.method !== 'GET') return say(405, 'read-only: GET only');
  if (url.pathname === '/') {
    const p = paging(url.searchParams);
    if (p === null)
      return say(
        400,
        `limit must be 1 to ${MAX_PAGE_LIMIT} and offset a whole number. <a href="/">All runs</a>`,
      );
    const f = filters(url.searchParams);
    const unfiltered = f.state === undefined && f.rule === undefined && f.tenant === undefined;
    const view =
      source.runs === undefined
        ? viewOf(await index.rows(signal), f, p)
        : unfiltered
          ? await indexedPage(source.runs, p, signal)
          : ((await rowsPage(source.runs, f, p, signal)) ?? viewOf(await index.rows(signal), f, p));
    return send(200, runListPage(view, f, p));
  }
  if (url.pathname === '/run') {
    const id = url.searchParams.get('id') ?? '';
    const fold = new RunTimelineFold(id);
    if (source.runs !== undefined) for (const rec of await source.runs.events(id)) fold.apply(rec);
    else
      await source.scan((rec) => {
        if (signal.aborted) throw new Abandoned('the client went away');
        fold.apply(rec);
      });
    const t = fold.timeline();
    if (t === undefined) return say(404, `No run <code>${esc(id)}</code>. <a href="/">All runs</a>`);
    return send(200, runPage(t, { backHref: '/' }));
  }
  say(404, 'Not found. <a href="/">All runs</a>');
}

/**
 * Serves the run list (paged: from the store's run index; filtered: from its run rows, or a kept
 * index where it has none) and each run's timeline, read-only, on `host:port` (port 0: any free
 * port). Work for a client that went away is stopped. `allowHosts`: names beside 127.0.0.1,
 * localhost and [::1] a request may give in its Host header.
 */
export function startUiServer(
  source: UiSource,
  port: number,
  host = '127.0.0.1',
  opts: { readonly allowHosts?: readonly string[] } = {},
): Promise<UiServer> {
  // Filtered pages the store's run rows cannot serve (Kafka, an old store): it reads the whole log
  // once (then what is new), so not before one is asked for.
  const index = new RunListIndex(source);
  const allowed = new Set([...LOCAL_HOSTS, ...(opts.allowHosts ?? []).map((h) => h.toLowerCase())]);
  const server = createServer((req, res) => {
    const left = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) left.abort();
    });
    respond(source, index, allowed, req, res, left.signal).catch((e: unknown) => {
      if (e instanceof Abandoned || left.signal.aborted) return;
      res.writeHead(500, { ...HEADERS, 'content-type': 'text/plain; charset=utf-8' });
      res.end(`loopguard ui: ${e instanceof Error ? e.message : String(e)}`);
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const a = server.address() as AddressInfo;
      resolve({
        url: `http://${host}:${a.port}`,
        close: () =>
          new Promise((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}
