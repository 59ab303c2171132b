/**
 * `loopguard ui` over 100,000 runs: the first list page, filtered or not (and a run's timeline),
 * comes back in under a second, also as the very first request after the ui starts, and what the
 * ui process holds does not grow with the log. The runs are written straight through the embedded
 * store's log.append (four events each, nearly every run live, so a fold of the whole log would
 * keep a state per run; a few wait or are stopped); the ui is the CLI in its own process, so its
 * peak RSS is its own.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RecordedEvent } from '../src/domain/index.js';
import { EmbeddedLog } from '../src/log/embedded/embedded-log.js';
import { SqliteSchemaStore } from '../src/log/embedded/sqlite-schema-store.js';
import { TOPICS } from '../src/log/event-log.js';
import { EventStore } from '../src/log/event-store.js';
import { SAMPLE_RECORDS } from './log-sample-events.js';
import { tempDirs } from './support/cli-run.js';

const ROOT = join(import.meta.dirname, '..');
const tmp = tempDirs('lg-ui-100k-');
const EVENTS_PER_RUN = 4;
const runId = (i: number) => `run-${String(i).padStart(6, '0')}`;
const eventOf = (type: string) => SAMPLE_RECORDS.find((r) => r.event.type === type) as RecordedEvent;

/**
 * Run i's row as the generator makes it: tenant t(i % 7); every fifth call refused by exact_repeat
 * (the others run); one run in 10,000 waiting after its call, another stopped.
 */
function rowOf(i: number): { state: string; rule: string | null; tenant: string } {
  const state = i % 10_000 === 4 ? 'WAITING' : i % 10_000 === 9 ? 'STOPPED_LOOP_GUARD' : 'RUNNING';
  return { state, rule: i % 5 === 0 ? 'exact_repeat' : null, tenant: `t${i % 7}` };
}

/** The events of run i (see rowOf). */
function eventsOf(i: number): RecordedEvent[] {
  const id = runId(i);
  const template = [...SAMPLE_RECORDS.slice(0, EVENTS_PER_RUN)];
  const { state } = rowOf(i);
  if (state === 'WAITING') template.push(eventOf('RunWaiting'));
  if (state === 'STOPPED_LOOP_GUARD') template.push(eventOf('RunStopped'));
  return template.map((r, k) => ({
    ...r,
    runId: id,
    eventId: `${id}/${k + 1}`,
    seq: k + 1,
    event:
      r.event.type === 'RunStarted'
        ? { ...r.event, runId: id, tenant: `t${i % 7}` }
        : r.event.type === 'GuardDecided' && i % 5 !== 0
          ? { ...r.event, decision: 'execute', rule: null }
          : r.event,
  }));
}

/** `n` runs (see rowOf), 5,000 runs to a transaction. */
async function dataDirWith(n: number): Promise<string> {
  const dir = tmp();
  const log = await EmbeddedLog.open(dir, { fsync: 'none' });
  const schemas = new SqliteSchemaStore(dir, { fsync: 'none' });
  const events = await EventStore.create(log, schemas);
  for (let from = 0; from < n; from += 5000) {
    const records = [];
    for (let i = from; i < Math.min(n, from + 5000); i++)
      for (const e of eventsOf(i)) records.push(events.runRecord(e));
    await log.append(TOPICS.runs, records);
  }
  await schemas.close();
  await log.close();
  return dir;
}

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
});

/** `loopguard ui` on `dir` in a process of its own, once it says where it listens. */
async function uiProcess(dir: string): Promise<{ url: string; pid: number; err: () => string }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/cli/main.ts', 'ui', '--port', '0', '--data-dir', dir],
    { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  children.push(child);
  let err = '';
  child.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const url = await new Promise<string>((resolve, reject) => {
    const look = () => {
      const m = /ui: (http:\S+) /.exec(err);
      if (m) resolve(m[1] as string);
    };
    child.stderr?.on('data', look);
    child.once('exit', (code) => reject(new Error(`ui exited (${code}): ${err}`)));
  });
  return { url, pid: child.pid as number, err: () => err };
}

/** The process's peak resident set, in MiB (Linux). */
function peakRssMiB(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1]) / 1024;
}

async function timed(url: string): Promise<{ ms: number; status: number; body: string }> {
  const t0 = performance.now();
  const res = await fetch(url);
  const body = await res.text();
  return { ms: performance.now() - t0, status: res.status, body };
}

/** The filters a visitor tries: by state, rule, tenant, all three, and one that matches few runs. */
const FILTERS: readonly Record<string, string>[] = [
  { state: 'RUNNING' },
  { rule: 'exact_repeat' },
  { tenant: 't3' },
  { state: 'RUNNING', rule: 'exact_repeat', tenant: 't2' },
  { state: 'WAITING' },
];

/** What a filtered page of `n` runs must say: how many match, and its first run. */
function expected(f: Record<string, string>, n: number): { matching: number; first: string } {
  let matching = 0;
  let first = '';
  for (let i = 0; i < n; i++) {
    const row = rowOf(i);
    if (Object.entries(f).some(([k, v]) => row[k as keyof typeof row] !== v)) continue;
    if (matching++ === 0) first = runId(i);
  }
  return { matching, first };
}

const filtered = (url: string, f: Record<string, string>, offset = 0) =>
  timed(`${url}/?${new URLSearchParams({ ...f, offset: String(offset) })}`);

/** What a visitor does: the first page, a deep one, the last, a run, eight first pages at once, filtered pages. */
async function visit(url: string, n: number) {
  const first = await timed(`${url}/`);
  const run = await timed(`${url}/run?id=${runId(n - 1)}`);
  const deep = await timed(`${url}/?offset=${Math.floor(n / 2)}&limit=100`);
  const last = await timed(`${url}/?offset=${n - 100}&limit=100`);
  const parallel = await Promise.all(Array.from({ length: 8 }, () => timed(`${url}/?limit=1000`)));
  const filters = [];
  for (const f of FILTERS) filters.push(await filtered(url, f));
  const deepFiltered = await filtered(url, { tenant: 't3' }, Math.floor(n / 14));
  return { first, run, deep, last, parallel, filters, deepFiltered };
}

describe('loopguard ui over 100,000 runs', () => {
  it('serves the first page in under a second and holds no more than over 1,000 runs', async () => {
    const n = 100_000;
    const small = await uiProcess(await dataDirWith(1000));
    await visit(small.url, 1000);
    const smallPeak = peakRssMiB(small.pid);

    const bigDir = await dataDirWith(n);
    const big = await uiProcess(bigDir);
    const seen = await visit(big.url, n);
    const bigPeak = peakRssMiB(big.pid);

    expect(seen.first.status).toBe(200);
    expect(seen.first.body).toContain(`${n} of ${n} runs; 1-100 shown`);
    expect(seen.first.body).toContain(`data-run-id="${runId(99)}"`);
    expect(seen.first.body).not.toContain(`data-run-id="${runId(100)}"`);
    expect(seen.first.body).toContain('<td>t1</td>');
    expect(seen.run.body).toContain(runId(n - 1));
    expect(seen.deep.body).toContain(`data-run-id="${runId(n / 2)}"`);
    expect(seen.last.body).toContain(`data-run-id="${runId(n - 1)}"`);
    for (const p of seen.parallel) expect(p.body).toContain('1-1000 shown');
    for (const [i, f] of FILTERS.entries()) {
      const want = expected(f, n);
      const page = seen.filters[i] as Awaited<ReturnType<typeof timed>>;
      expect(page.body, JSON.stringify(f)).toContain(`${want.matching} of ${n} runs; 1-`);
      expect(page.body, JSON.stringify(f)).toContain(`data-run-id="${want.first}"`);
      expect(page.ms, JSON.stringify(f)).toBeLessThan(1000);
    }
    expect(seen.deepFiltered.body).toContain(`data-run-id="${runId(Math.floor(n / 14) * 7 + 3)}"`);
    const figures = `first ${seen.first.ms.toFixed(0)} ms, run ${seen.run.ms.toFixed(0)} ms, deep ${seen.deep.ms.toFixed(0)} ms, last ${seen.last.ms.toFixed(0)} ms, filtered ${seen.filters.map((f) => f.ms.toFixed(0)).join('/')} ms, deep filtered ${seen.deepFiltered.ms.toFixed(0)} ms; peak RSS ${bigPeak.toFixed(0)} MiB (${smallPeak.toFixed(0)} MiB over 1,000 runs)`;
    console.log(figures);
    expect(seen.first.ms, figures).toBeLessThan(1000);
    expect(seen.run.ms, figures).toBeLessThan(1000);
    expect(seen.deepFiltered.ms, figures).toBeLessThan(1000);
    // The ui's memory follows the pages asked for, not the log: within 64 MiB of the small log's (it was 376 MiB more).
    expect(bigPeak - smallPeak, figures).toBeLessThan(64);

    // Each filter as the very first request of a ui just started: nothing folded before it.
    const firsts: string[] = [];
    for (const f of FILTERS) {
      const fresh = await uiProcess(bigDir);
      const page = await filtered(fresh.url, f);
      const peak = peakRssMiB(fresh.pid);
      firsts.push(`${JSON.stringify(f)} ${page.ms.toFixed(0)} ms, peak RSS ${peak.toFixed(0)} MiB`);
      expect(page.body, JSON.stringify(f)).toContain(`${expected(f, n).matching} of ${n} runs; 1-`);
      expect(page.ms, firsts.join('; ')).toBeLessThan(1000);
      expect(peak - smallPeak, firsts.join('; ')).toBeLessThan(64);
      (children.pop() as ChildProcess).kill('SIGKILL');
    }
    console.log(`first request filtered: ${firsts.join('; ')}`);
  }, 300_000);
});
