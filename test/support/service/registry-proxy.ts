/**
 * An HTTP proxy in front of the test's schema registry that answers 503 for the schema ids it is
 * told to fail, as a registry in an outage does for some of its requests: the worker behind it sees
 * a dependency that does not answer, every other request goes through untouched.
 */
import { createServer, type Server } from 'node:http';

export interface RegistryProxy {
  /** The registry URL to hand the worker (same path as the real one). */
  readonly url: string;
  /** Schema ids answered 503 from now on. */
  fail(id: number): void;
  /** Every id answers again. */
  heal(): void;
  /** How many GETs of a failed id were refused. */
  refused(): number;
  close(): Promise<void>;
}

export async function registryProxy(registryUrl: string): Promise<RegistryProxy> {
  const target = new URL(registryUrl);
  const failing = new Set<number>();
  let refused = 0;
  const server: Server = createServer((req, res) => {
    const id = /\/schemas\/ids\/(\d+)/.exec(req.url ?? '')?.[1];
    if (id !== undefined && failing.has(Number(id))) {
      refused++;
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end('{"error_code":50301,"message":"registry unavailable (test outage)"}');
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers))
        if (typeof v === 'string' && k !== 'host' && k !== 'content-length') headers[k] = v;
      const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
      fetch(new URL(req.url ?? '/', target.origin), {
        method: req.method ?? 'GET',
        headers,
        ...(body !== undefined && req.method !== 'GET' ? { body } : {}),
      }).then(
        async (r) => {
          res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/json' });
          res.end(Buffer.from(await r.arrayBuffer()));
        },
        (e: Error) => {
          res.writeHead(502);
          res.end(e.message);
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}${target.pathname}`,
    fail: (id) => failing.add(id),
    heal: () => failing.clear(),
    refused: () => refused,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
