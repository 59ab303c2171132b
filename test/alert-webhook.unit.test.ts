/**
 * A webhook on a real local HTTP server: a 302 is a failed delivery (followed, the POST would be a
 * bodyless GET whose 200 counts as delivered, and the alert would be lost), a URL with credentials
 * is refused when the sink is made (its error shows no secret) and a header carries them instead;
 * retries spread with jitter and give up after maxAttempts with `alert_undeliverable`.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { deliverWithRetry, type Sleep, webhookSink } from '../src/alert/index.js';
import type { StopAlert } from '../src/alert/stop-alert.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

async function serve(
  answer: (req: IncomingMessage, body: string) => { status: number; headers?: Record<string, string> },
): Promise<{
  url: string;
  seen: { method: string; path: string; auth: string | undefined; body: string }[];
}> {
  const seen: { method: string; path: string; auth: string | undefined; body: string }[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString();
    });
    req.on('end', () => {
      seen.push({ method: req.method ?? '', path: req.url ?? '', auth: req.headers.authorization, body });
      const a = answer(req, body);
      res.writeHead(a.status, a.headers);
      res.end('ok');
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return { url: `http://127.0.0.1:${port}`, seen };
}

const alert = { event_id: 'run-1/9', run_id: 'run-1' } as unknown as StopAlert;

describe('webhookSink', () => {
  it('takes a 302 as a failed delivery and never follows it', async () => {
    const hook = await serve((req) =>
      req.url === '/hook' ? { status: 302, headers: { location: '/elsewhere' } } : { status: 200 },
    );
    const sink = webhookSink(`${hook.url}/hook`);
    await expect(sink.deliver(alert)).rejects.toMatchObject({
      code: 'webhook_redirected',
      retriable: true,
      details: { status: 302 },
    });
    expect(hook.seen.map((s) => `${s.method} ${s.path}`)).toEqual(['POST /hook']);
  });

  it('refuses a URL with credentials, showing none of them, and sends a header instead', async () => {
    expect(() => webhookSink('https://ops:hunter2@hooks.example.com/alert?token=abc')).toThrow(
      expect.objectContaining({ code: 'webhook_credentials' }),
    );
    try {
      webhookSink('https://ops:hunter2@hooks.example.com/alert?token=abc');
    } catch (e) {
      expect((e as Error).message).not.toMatch(/hunter2|token=abc/);
    }
    const hook = await serve(() => ({ status: 204 }));
    const sink = webhookSink(`${hook.url}/hook?token=abc`, {
      headers: { authorization: 'Basic b3BzOmh1bnRlcjI=' },
    });
    expect(sink.name).not.toContain('token');
    await sink.deliver(alert);
    expect(hook.seen[0]).toMatchObject({ method: 'POST', auth: 'Basic b3BzOmh1bnRlcjI=' });
    expect(JSON.parse(hook.seen[0]?.body ?? '{}')).toMatchObject({ event_id: 'run-1/9' });
  });
});

describe('deliverWithRetry: jitter and a dead letter', () => {
  it('spreads each wait over half to all of it, and gives up after maxAttempts', async () => {
    const waits: number[] = [];
    const sleep: Sleep = async (ms) => {
      waits.push(ms);
    };
    const hook = await serve(() => ({ status: 302, headers: { location: '/x' } }));
    const sink = webhookSink(hook.url);
    const draws = [0, 1, 0.5];
    await expect(
      deliverWithRetry(() => sink.deliver(alert), {
        retry: { baseMs: 100, maxMs: 1000, maxAttempts: 4 },
        sleep,
        heartbeatEveryMs: 1e9,
        random: () => draws.shift() ?? 0,
      }),
    ).rejects.toMatchObject({
      code: 'alert_undeliverable',
      details: { attempts: 4, last: 'webhook_redirected' },
    });
    expect(waits).toEqual([50, 200, 300]);
    expect(hook.seen).toHaveLength(4);
  });
});

describe('alert --webhook with credentials in the URL', () => {
  it('stops before anything starts, and prints none of them', async () => {
    const { runCli } = await import('./support/cli-run.js');
    const run = runCli([
      'alert',
      '--kafka',
      '--brokers',
      '127.0.0.1:1',
      '--registry',
      'http://127.0.0.1:1',
      '--webhook',
      'https://ops:hunter2@hooks.example.com/alert',
    ]);
    await expect(run).rejects.toMatchObject({ code: 'webhook_credentials' });
    await expect(run).rejects.toSatisfy((e: Error) => !e.message.includes('hunter2'));
  }, 30_000);
});
