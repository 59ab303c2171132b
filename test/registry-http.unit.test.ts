/**
 * Every request to the schema registry has a deadline and a bounded retry: a registry that takes
 * a request and never answers (as a loaded Apicurio once did, and a CI run waited three minutes
 * on it) costs a few seconds and a retriable `registry_unavailable`, never a hang.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { registryRequest } from '../src/events/registry-http.js';
import { RegistrySchemaStore } from '../src/events/registry-schema-store.js';

type Handler = (req: IncomingMessage, res: ServerResponse, n: number) => void;

const servers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of servers.splice(0)) await close();
});

/** A registry stand-in whose n-th request (from 1) is answered by `handle`, or not at all. */
async function registry(handle: Handler): Promise<{ url: string; requests: () => number }> {
  let n = 0;
  const server = createServer((req, res) => handle(req, res, ++n));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Requests never answered and idle keep-alive sockets would hold close() open.
        server.closeAllConnections();
      }),
  );
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/apis/ccompat/v7`, requests: () => n };
}

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

describe('registryRequest', () => {
  it('asks again after an attempt that got no answer within its deadline', async () => {
    const r = await registry((_, res, n) => {
      if (n > 1) json(res, 200, { schema: '"string"' });
    });
    const res = await registryRequest(`${r.url}/schemas/ids/1`, 'GET schema 1', {}, { timeoutMs: 200 });
    expect(await res.json()).toEqual({ schema: '"string"' });
    expect(r.requests()).toBe(2);
  });

  it('asks again after HTTP 5xx, and hands back any other answer as it is', async () => {
    const r = await registry((_, res, n) =>
      n === 1 ? json(res, 503, {}) : json(res, 404, { error_code: 40403 }),
    );
    const res = await registryRequest(`${r.url}/schemas/ids/1`, 'GET schema 1', {}, { timeoutMs: 1000 });
    expect(res.status).toBe(404);
    expect(r.requests()).toBe(2);
  });

  it('gives up after its attempts with a retriable registry_unavailable that names the deadline', async () => {
    const r = await registry(() => undefined);
    const started = Date.now();
    const failed = registryRequest(
      `${r.url}/schemas/ids/1`,
      'GET schema 1',
      {},
      { timeoutMs: 150, attempts: 3 },
    );
    await expect(failed).rejects.toMatchObject({
      code: 'registry_unavailable',
      retriable: true,
      message: expect.stringMatching(/GET schema 1: .* did not answer within 150 ms/),
    });
    expect(r.requests()).toBe(3);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe('RegistrySchemaStore over registryRequest', () => {
  it('registers through a registry that dropped the first POST, and sets the level first', async () => {
    const seen: string[] = [];
    let posts = 0;
    const r = await registry((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      if (req.method === 'GET') return json(res, 404, { error_code: 40401 });
      if (req.method === 'PUT') return json(res, 200, { compatibility: 'BACKWARD' });
      // The first POST is taken and never answered.
      if (++posts === 1) return;
      let body = '';
      req.on('data', (c: Buffer) => {
        body += c.toString();
      });
      req.on('end', () => {
        expect(JSON.parse(body)).toEqual({ schema: '"string"' });
        json(res, 200, { id: 7 });
      });
    });
    const store = new RegistrySchemaStore({ url: r.url, requestTimeoutMs: 300 });
    expect(await store.register('t-value', '"string"')).toBe(7);
    expect(seen.filter((s) => s.startsWith('POST'))).toHaveLength(2);
    expect(seen[0]).toBe('GET /apis/ccompat/v7/config/t-value');
    expect(await store.schemaById(7)).toBe('"string"');
  });
});
