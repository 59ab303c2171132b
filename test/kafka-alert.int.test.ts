/**
 * `loopguard alert --kafka --webhook` as a real child process against the real broker: a slow,
 * flaky receiver, a SIGKILL mid-stream, a restart in the same group. Every stop must reach the
 * receiver at least once, and exactly once after the receiver's dedupe by Idempotency-Key.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import type { RecordedEvent, StopReport } from '../src/domain/index.js';
import { snakeKeys } from '../src/domain/snake-keys.js';
import { RegistrySchemaStore } from '../src/events/registry-schema-store.js';
import { EventStore } from '../src/log/event-store.js';
import { KafkaLog } from '../src/log/kafka/kafka-log.js';
import { kafkaEnv } from './setup/kafka-env.js';
import { captureIo } from './support/capture-io.js';
import { stopReport } from './support/stop-report.js';
import { until } from './support/until.js';

const repo = join(import.meta.dirname, '..');
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

const report = (i: number): StopReport =>
  stopReport({
    terminalState: i % 2 === 0 ? 'STOPPED_LOOP_GUARD' : 'NEEDS_HUMAN',
    guardReason: i % 2 === 0 ? 'exact_repeat' : 'permission_denied',
    message: `stop ${i}`,
    spend: { steps: 1, toolCalls: 1, tokens: 0, costUsd: 0, elapsedMs: i },
  });
const stop = (i: number): RecordedEvent => ({
  eventId: `run-${i}/9`,
  runId: `run-${i}`,
  seq: 9,
  atMs: 1_700_000_000_000 + i,
  event: { type: 'RunStopped', report: report(i) },
});

/** Accepts a POST only now and then slowly, refuses every 4th; counts what it accepted by key. */
async function flakyReceiver() {
  const accepted = new Map<string, number>();
  let requests = 0;
  const mismatches: string[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      const n = ++requests;
      setTimeout(() => {
        if (n % 4 === 0) {
          res.writeHead(503).end('busy');
          return;
        }
        const key = String(req.headers['idempotency-key']);
        if (JSON.parse(body).event_id !== key) mismatches.push(key);
        accepted.set(key, (accepted.get(key) ?? 0) + 1);
        res.writeHead(200).end('ok');
      }, 40);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/alerts`;
  return { url, accepted, mismatches, requests: () => requests };
}

function startAlert(args: string[]): ChildProcess & { stderr_: () => string } {
  // node --import tsx, not npx: SIGKILL must hit the subscriber itself, not a wrapper process.
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(repo, 'src/cli/main.ts'), 'alert', ...args],
    {
      cwd: repo,
      env: { ...process.env, KAFKA_BROKERS: '', SCHEMA_REGISTRY_URL: '' },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let err = '';
  child.stderr?.on('data', (c) => {
    err += c;
  });
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return Object.assign(child, { stderr_: () => err });
}

const exited = (c: ChildProcess) =>
  new Promise<number | string>((r) => {
    if (c.exitCode !== null || c.signalCode !== null) r(c.exitCode ?? c.signalCode ?? -1);
    else c.once('exit', (code, signal) => r(code ?? signal ?? -1));
  });

describe('loopguard alert --kafka --webhook', () => {
  it('delivers every stop exactly once after dedupe, across a SIGKILL and a restart', {
    timeout: 150_000,
  }, async () => {
    const { brokers, registryUrl } = kafkaEnv();
    const prefix = `alert-${randomUUID()}.`;
    const log = await KafkaLog.connect({ brokers, topicPrefix: prefix });
    cleanups.push(() => log.close());
    const events = await EventStore.create(log, new RegistrySchemaStore({ url: registryUrl }), {
      subjectFor: (t) => `${log.physicalName(t)}-value`,
    });
    const first = Array.from({ length: 30 }, (_, i) => stop(i));
    for (const s of first) await events.append([s]);

    const receiver = await flakyReceiver();
    const args = [
      ...['--kafka', '--brokers', brokers.join(','), '--registry', registryUrl, '--topic-prefix', prefix],
      ...['--webhook', receiver.url, '--group', `alert-${randomUUID()}`],
      ...['--retry-base-ms', '50', '--retry-max-ms', '400', '--session-timeout-ms', '6000'],
    ];

    const a = startAlert(args);
    await until('10 accepted alerts', () => receiver.accepted.size >= 10, {
      ms: 60_000,
      log: a.stderr_,
      every: 50,
    });
    a.kill('SIGKILL');
    expect(await exited(a)).toBe('SIGKILL');
    const beforeRestart = receiver.accepted.size;
    expect(beforeRestart).toBeLessThan(first.length);

    const b = startAlert(args);
    const later = Array.from({ length: 10 }, (_, i) => stop(100 + i));
    await events.append(later);
    const all = [...first, ...later].map((s) => s.eventId);
    await until('every alert', () => all.every((id) => receiver.accepted.has(id)), {
      ms: 90_000,
      log: b.stderr_,
      every: 50,
    });
    b.kill('SIGTERM');
    expect(await exited(b)).toBe(0);

    expect(receiver.mismatches).toEqual([]);
    expect([...receiver.accepted.keys()].sort()).toEqual([...all].sort());
    const redelivered = [...receiver.accepted.values()].filter((n) => n > 1).length;
    // One commit per delivery: only what was in flight at the kill can come again.
    expect(redelivered).toBeLessThanOrEqual(1);
    expect(receiver.requests()).toBeGreaterThan(all.length); // the 503s were retried
    expect(a.stderr_() + b.stderr_()).toMatch(/attempt 1 failed \(webhook_refused: .*HTTP 503/);
  });

  it('without --webhook prints one JSON line per stop on stdout, from the start of the topic', async () => {
    const { brokers, registryUrl } = kafkaEnv();
    const prefix = `alert-${randomUUID()}.`;
    const log = await KafkaLog.connect({ brokers, topicPrefix: prefix });
    cleanups.push(() => log.close());
    const events = await EventStore.create(log, new RegistrySchemaStore({ url: registryUrl }), {
      subjectFor: (t) => `${log.physicalName(t)}-value`,
    });
    await events.append([stop(1), stop(2), stop(3)]);

    const io = captureIo();
    const ctl = new AbortController();
    const running = main(
      [
        'alert',
        '--kafka',
        '--brokers',
        brokers.join(','),
        '--registry',
        registryUrl,
        '--topic-prefix',
        prefix,
      ],
      io,
      { env: {}, signal: ctl.signal },
    );
    await until('3 lines', () => io.stdout().split('\n').length > 3, {
      ms: 30_000,
      log: io.stderr,
      every: 50,
    });
    ctl.abort();
    expect(await running).toBe(0);
    const lines = io
      .stdout()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toEqual(
      [1, 2, 3].map((i) => ({
        event_id: `run-${i}/9`,
        run_id: `run-${i}`,
        terminal_state: report(i).terminalState,
        reason: report(i).guardReason,
        at_ms: 1_700_000_000_000 + i,
        report: snakeKeys(report(i)),
      })),
    );
    expect(io.stderr()).toMatch(/group loopguard-alert on alert-.*loopguard\.stops/);
  });

  it('takes a 302 as a failure, never follows it, and dead-letters the stop after --dead-letter-after attempts', async () => {
    const { brokers, registryUrl } = kafkaEnv();
    const prefix = `alert-${randomUUID()}.`;
    const log = await KafkaLog.connect({ brokers, topicPrefix: prefix });
    cleanups.push(() => log.close());
    const events = await EventStore.create(log, new RegistrySchemaStore({ url: registryUrl }), {
      subjectFor: (t) => `${log.physicalName(t)}-value`,
    });
    const seen: string[] = [];
    const server: Server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        seen.push(`${req.method} ${req.url}`);
        if (req.url === '/hook') res.writeHead(302, { location: '/moved' }).end();
        else res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    await events.append([stop(1), stop(2)]);

    const kafka = [
      '--kafka',
      '--brokers',
      brokers.join(','),
      '--registry',
      registryUrl,
      '--topic-prefix',
      prefix,
    ];
    const io = captureIo();
    const ctl = new AbortController();
    const running = main(
      [
        'alert',
        ...kafka,
        '--webhook',
        url,
        '--retry-base-ms',
        '10',
        '--retry-max-ms',
        '20',
        '--dead-letter-after',
        '3',
      ],
      io,
      { env: {}, signal: ctl.signal },
    );
    const dlq = async () => (await log.readAll('loopguard.dlq').catch(() => [])).length;
    const end = Date.now() + 60_000;
    while ((await dlq()) < 2 && Date.now() < end) await new Promise((r) => setTimeout(r, 200));
    ctl.abort();
    expect(await running).toBe(0);
    const dead = await log.readAll('loopguard.dlq');
    expect(dead.map((r) => JSON.parse(r.value.toString()).event_id)).toEqual(['run-1/9', 'run-2/9']);
    expect(dead[0]?.headers).toMatchObject({ code: 'alert_undeliverable' });
    expect(seen).toEqual(Array.from({ length: 6 }, () => 'POST /hook'));
    expect(io.stderr()).toMatch(
      /run-1\/9: given up after 3 attempts; the last: webhook_redirected.*put on loopguard\.dlq/,
    );

    // Committed past: the group's next subscriber starts after them.
    const next = captureIo();
    const ctl2 = new AbortController();
    const again = main(['alert', ...kafka], next, { env: {}, signal: ctl2.signal });
    await events.append([stop(3)]);
    await until('the next stop', () => next.stdout().includes('run-3/9'), {
      ms: 30_000,
      log: next.stderr,
      every: 50,
    });
    ctl2.abort();
    expect(await again).toBe(0);
    expect(next.stdout()).not.toContain('run-1/9');
  });
});
