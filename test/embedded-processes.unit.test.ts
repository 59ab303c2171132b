/**
 * Many processes on one data dir, the embedded default: guarded calls under one operation key,
 * writers racing on one run, a writer killed between its append and the tool, and readers (`ui`,
 * `audit`) while two writers write. Every process opens the same `loopguard.db`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { EmbeddedLog } from '../src/log/embedded/embedded-log.js';
import { SqliteSchemaStore } from '../src/log/embedded/sqlite-schema-store.js';
import { EventStore } from '../src/log/event-store.js';
import { createGuard } from '../src/runtime/index.js';
import { captureIo } from './support/capture-io.js';
import { count, hit } from './support/faults/counter.js';

const CHILD = fileURLToPath(new URL('./support/embedded-process.ts', import.meta.url));
const KEY = 'acme:pay:A1';

interface Proc {
  readonly child: ChildProcess;
  line(prefix: string): Promise<string>;
  readonly exited: Promise<number | null>;
  send(word: string): void;
}

const cleanup: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanup.splice(0).reverse()) c();
});
const dir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'lg-procs-'));
  cleanup.push(() => rmSync(d, { recursive: true, force: true }));
  return d;
};

function start(job: object): Proc {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, JSON.stringify(job)], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  cleanup.push(() => child.kill('SIGKILL'));
  let out = '';
  let err = '';
  const waiting: (() => void)[] = [];
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
    for (const w of waiting) w();
  });
  child.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return {
    child,
    exited,
    send: (word) => child.stdin?.write(`${word}\n`),
    line: (prefix) =>
      new Promise((resolve, reject) => {
        const check = (): boolean => {
          const hitLine = out.split('\n').find((l) => l.startsWith(prefix));
          if (hitLine !== undefined) resolve(hitLine.slice(prefix.length).trim());
          return hitLine !== undefined;
        };
        if (check()) return;
        waiting.push(check);
        void exited.then((code) => {
          if (!check()) reject(new Error(`child exited (${code}) before "${prefix}": ${err.slice(-3000)}`));
        });
      }),
  };
}

async function openStream(dataDir: string) {
  const log = await EmbeddedLog.open(dataDir, { readOnly: true });
  const schemas = new SqliteSchemaStore(dataDir, { readOnly: true });
  const stream = log.runStream(await EventStore.create(log, schemas));
  return {
    stream,
    log,
    close: async () => {
      await schemas.close();
      await log.close();
    },
  };
}

describe('one data dir, many processes', () => {
  it('4 processes call under one operation key: the tool runs once, all see one ledger outcome', async () => {
    const data = dir();
    const counter = join(data, 'pay.count');
    const procs = [0, 1, 2, 3].map((i) =>
      start({ mode: 'call', dataDir: data, runId: `w${i}`, operationKey: KEY, counter }),
    );
    await Promise.all(procs.map((p) => p.line('ready')));
    for (const p of procs) p.send('go');
    const results = (await Promise.all(procs.map((p) => p.line('result ')))).map(
      (r) => JSON.parse(r) as { status: string },
    );
    expect(count(counter)).toBe(1);
    expect(results.filter((r) => r.status === 'executed')).toHaveLength(1);
    for (const r of results) expect(['executed', 'cached', 'waiting']).toContain(r.status);
    for (const p of procs) p.send('look');
    const seen = await Promise.all(procs.map((p) => p.line('ledger ')));
    const winner = `w${results.findIndex((r) => r.status === 'executed')}`;
    for (const s of seen)
      expect(JSON.parse(s)).toEqual({
        status: 'completed',
        owner: { runId: winner, callId: expect.any(String) },
        resultJson: JSON.stringify({ paymentId: `p-${winner}` }),
      });
    expect(new Set(seen).size).toBe(1);
    expect(await Promise.all(procs.map((p) => p.exited))).toEqual([0, 0, 0, 0]);
  }, 60_000);

  it('writers racing on one run get conflict, and every event each one was told is durable is there', async () => {
    const data = dir();
    // The run exists first, so every writer reads the same head before any of them appends.
    const seed = start({ mode: 'append', dataDir: data, runId: 'shared', count: 1 });
    await seed.line('ready');
    seed.send('go');
    await seed.line('done ');
    const writers = [0, 1, 2].map(() => start({ mode: 'append', dataDir: data, runId: 'shared', count: 15 }));
    await Promise.all(writers.map((w) => w.line('ready')));
    for (const w of writers) w.send('go');
    const done = (await Promise.all(writers.map((w) => w.line('done ')))).map(
      (d) => JSON.parse(d) as { conflicts: number; mine: string[] },
    );
    // All three appended at seq 1 first: exactly one could win it, so the others got conflict.
    expect(done.reduce((n, d) => n + d.conflicts, 0)).toBeGreaterThanOrEqual(2);
    const { stream, close } = await openStream(data);
    const events = await stream.readStream('shared');
    await close();
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events).toHaveLength(1 + 45);
    const ids = new Set(events.map((e) => e.eventId));
    for (const d of done) for (const id of d.mine) expect(ids.has(id)).toBe(true);
  }, 60_000);

  it('a writer SIGKILLed between its append and the tool leaves a readable store and an in-doubt key that reconcile settles', async () => {
    const data = dir();
    const victim = start({ mode: 'kill-before-tool', dataDir: data, runId: 'victim', operationKey: KEY });
    await victim.line('in-tool');
    victim.child.kill('SIGKILL');
    await victim.exited;
    const { stream, close } = await openStream(data);
    const recorded = (await stream.readStream('victim')).map((e) => e.event.type);
    await close();
    expect(recorded).toContain('OperationClaimed');
    expect(recorded).toContain('GuardDecided');
    expect(recorded).not.toContain('ToolCallCompleted');
    const guard = await createGuard({ dataDir: data, secretKey: 'test-key' });
    cleanup.push(() => void guard.close());
    const counter = join(data, 'pay.count');
    const pay = { tool: 'pay', args: { order: 'A1' }, sideEffect: true, operationKey: KEY };
    const tool = () => {
      hit(counter);
      return { paymentId: 'p-2' };
    };
    const other = await guard.startRun({ runId: 'next' });
    expect(await other.call(pay, tool)).toMatchObject({ status: 'stopped', rule: 'in_doubt' });
    expect(count(counter)).toBe(0);
    const again = await guard.startRun({ runId: 'reconciled' });
    // The provider says the charge never happened (the tool never ran): the key is free again.
    const reconcile = async () => ({ happened: false });
    expect(await again.call(pay, tool, { reconcile })).toMatchObject({ status: 'executed' });
    expect(count(counter)).toBe(1);
  }, 60_000);

  it('ui and audit read while two writers write', async () => {
    const data = dir();
    const first = start({ mode: 'runs', dataDir: data, runId: 'early', count: 1 });
    await first.line('done');
    const writers = ['a', 'b'].map((w) =>
      start({ mode: 'runs', dataDir: data, runId: `busy-${w}`, count: 12 }),
    );
    const ctl = new AbortController();
    const uiIo = captureIo();
    const ui = main(['ui', '--port', '0', '--data-dir', data], uiIo, { env: {}, signal: ctl.signal });
    try {
      let url: string | undefined;
      for (let i = 0; i < 400 && url === undefined; i++) {
        url = /ui: (http:\S+)/.exec(uiIo.stderr())?.[1];
        if (url === undefined) await new Promise((r) => setTimeout(r, 25));
      }
      let reads = 0;
      const writing = Promise.all(writers.map((w) => w.line('done')));
      let finished = false;
      void writing.then(() => {
        finished = true;
      });
      while (!finished || reads < 3) {
        const page = await fetch(`${url}/run?id=${encodeURIComponent('early-0')}`);
        expect(page.status).toBe(200);
        const io = captureIo();
        expect(await main(['audit', 'early-0', '--data-dir', data], io, { env: {} })).toBe(0);
        expect(io.stdout()).toContain('early-0');
        reads++;
        // Readers that never pause would take the CPU the writers need on a small machine.
        await new Promise((r) => setTimeout(r, 20));
      }
      await writing;
      const list = await (await fetch(`${url}/`)).text();
      expect(list).toContain('busy-a-11');
      expect(list).toContain('busy-b-11');
    } finally {
      ctl.abort();
    }
    expect(await ui).toBe(0);
  }, 180_000);
});
