/**
 * `loopguard ui` over 100,000 runs: the first list page (and a run's timeline) comes back in under
 * a second, and what the ui process holds does not grow with the log. The runs are written straight
 * through the embedded store (four events each, every run live, so a fold of the whole log would
 * keep a state per run); the ui is the CLI in its own process, so its peak RSS is its own.
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

/** `n` live runs (started, a call requested, decided, completed), 5,000 runs to a transaction. */
async function dataDirWith(n: number): Promise<string> {
  const dir = tmp();
  const log = await EmbeddedLog.open(dir, { fsync: 'none' });
  const schemas = new SqliteSchemaStore(dir, { fsync: 'none' });
  const events = await EventStore.create(log, schemas);
  const template = SAMPLE_RECORDS.slice(0, EVENTS_PER_RUN);
  for (let from = 0; from < n; from += 5000) {
    const records = [];
    for (let i = from; i < Math.min(n, from + 5000); i++) {
      const id = runId(i);
      for (const [k, r] of template.entries()) {
        const e: RecordedEvent = {
          ...r,
          runId: id,
          eventId: `${id}/${k + 1}`,
          seq: k + 1,
          event: r.event.type === 'RunStarted' ? { ...r.event, runId: id, tenant: `t${i % 7}` } : r.event,
        };
        records.push(events.runRecord(e));
      }
    }
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

/** What a visitor does: the first page, a deep one, the last, a run, and eight first pages at once. */
async function visit(url: string, n: number) {
  const first = await timed(`${url}/`);
  const run = await timed(`${url}/run?id=${runId(n - 1)}`);
  const deep = await timed(`${url}/?offset=${Math.floor(n / 2)}&limit=100`);
  const last = await timed(`${url}/?offset=${n - 100}&limit=100`);
  const parallel = await Promise.all(Array.from({ length: 8 }, () => timed(`${url}/?limit=1000`)));
  return { first, run, deep, last, parallel };
}

describe('loopguard ui over 100,000 runs', () => {
  it('serves the first page in under a second and holds no more than over 1,000 runs', async () => {
    const n = 100_000;
    const small = await uiProcess(await dataDirWith(1000));
    await visit(small.url, 1000);
    const smallPeak = peakRssMiB(small.pid);

    const big = await uiProcess(await dataDirWith(n));
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
    const figures = `first ${seen.first.ms.toFixed(0)} ms, run ${seen.run.ms.toFixed(0)} ms, deep ${seen.deep.ms.toFixed(0)} ms, last ${seen.last.ms.toFixed(0)} ms; peak RSS ${bigPeak.toFixed(0)} MiB (${smallPeak.toFixed(0)} MiB over 1,000 runs)`;
    console.log(figures);
    expect(seen.first.ms, figures).toBeLessThan(1000);
    expect(seen.run.ms, figures).toBeLessThan(1000);
    // The ui's memory follows the pages asked for, not the log: within 64 MiB of the small log's (it was 376 MiB more).
    expect(bigPeak - smallPeak, figures).toBeLessThan(64);
  }, 300_000);
});
