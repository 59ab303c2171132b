/**
 * The data dir from the CLI's side: read commands never create or change it, and two replays of
 * the same runs into one dir at once record each run exactly once (the "already recorded" check
 * is the stream's conditional append: UNIQUE(run_id, seq) in the database).
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { type OpenStore, openEmbeddedStore } from '../src/cli/open-store.js';
import { replayCommand, type WithSink } from '../src/cli/replay-command.js';
import { EmbeddedLog } from '../src/log/embedded/embedded-log.js';
import { SqliteSchemaStore } from '../src/log/embedded/sqlite-schema-store.js';
import { EventStore } from '../src/log/event-store.js';
import { captureIo } from './support/capture-io.js';
import { runCli, tempDirs } from './support/cli-run.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const RUNS = join(ROOT, 'examples', 'runs.jsonl');
const POLICY = join(ROOT, 'examples', 'policy.json');
const tmp = tempDirs('lg-datadir-');

const run = (args: string[]) => runCli(args);

/** Every file and directory under `dir` with its size and modification time. */
function tree(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const st = statSync(p);
      out.push(`${relative(dir, p)} ${st.isDirectory() ? 'dir' : st.size} ${st.mtimeMs}`);
      if (st.isDirectory()) walk(p);
    }
  };
  walk(dir);
  return out.sort();
}

describe('read commands on a data dir', () => {
  it('never create a data dir that is not there', async () => {
    const missing = join(tmp(), 'typo');
    for (const args of [['rebuild'], ['audit', 'demo/ping-pong'], ['stops']]) {
      await expect(run([...args, '--data-dir', missing])).rejects.toMatchObject({
        code: 'no_data_dir',
        message: expect.stringContaining(missing),
      });
    }
    expect(existsSync(missing)).toBe(false);
  });

  it('leave every file of the data dir as it was', async () => {
    const dir = tmp();
    expect((await run(['replay', RUNS, '--policy', POLICY, '--data-dir', dir])).code).toBe(0);
    const before = tree(dir);
    expect((await run(['rebuild', '--data-dir', dir])).code).toBe(0);
    expect((await run(['audit', 'demo/ping-pong', '--data-dir', dir])).out).toMatch(/short_cycle/);
    expect((await run(['stops', '--json', '--data-dir', dir])).out.trim().split('\n')).toHaveLength(6);
    // A reader of a WAL database may leave SQLite's shared-memory index and an empty WAL beside
    // it (they are not data, and a reader cannot tell whether another process still uses them);
    // every file with data stays as it was.
    const wal = /^loopguard\.db-(shm \d+|wal 0) /;
    expect(tree(dir).filter((l) => !wal.test(l))).toEqual(before.filter((l) => !wal.test(l)));
    expect(before.some((l) => l.startsWith('loopguard.db '))).toBe(true);
  });
});

function replayProcess(dir: string): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/cli/main.ts', 'replay', RUNS, '--policy', POLICY, '--json', '--data-dir', dir],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    err += d.toString();
  });
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, out, err })));
}

describe('two replays into one data dir at once', () => {
  it('refuse a run recorded after the other replay looked: the check is made when writing', async () => {
    const dir = tmp();
    // Both look before either writes: the moment the old check-then-append let duplicates in.
    const first = await openEmbeddedStore(dir);
    const firstKnown = await first.knownRunIds();
    const late = captureIo();
    const peek = await openEmbeddedStore(dir, { readOnly: true });
    const secondKnown = await peek.knownRunIds();
    await peek.close();
    expect([firstKnown.size, secondKnown.size]).toEqual([0, 0]);
    const sink =
      (s: OpenStore, known: ReadonlySet<string>): WithSink =>
      (work) =>
        work({
          knownRunIds: known,
          where: s.where,
          secretKey: 'test-key',
          append: (runId, r) => s.stream.appendToStream(runId, r, { expectedStreamVersion: 0 }),
        });
    expect(
      await replayCommand([RUNS], { policy: POLICY, json: true }, sink(first, firstKnown), captureIo()),
    ).toBe(0);
    await first.close();
    const other = await openEmbeddedStore(dir);
    expect(await replayCommand([RUNS], { policy: POLICY, json: true }, sink(other, secondKnown), late)).toBe(
      1,
    );
    await other.close();
    expect(late.stdout()).toBe('');
    expect(late.stderr().match(/already recorded/g)).toHaveLength(6);
    const log = await EmbeddedLog.open(dir, { readOnly: true });
    expect(await log.endOffset('loopguard.runs')).toBe((await log.read('loopguard.runs', 0)).length);
    const starts = (await log.read('loopguard.runs', 0)).filter(
      (r) => r.headers?.['loopguard.type'] === 'RunStarted',
    );
    expect(starts).toHaveLength(6);
    await log.close();
  });

  it('record each run exactly once, and no run is reported recorded by both', async () => {
    const dir = tmp();
    const results = await Promise.all([replayProcess(dir), replayProcess(dir)]);
    const printed = results.flatMap((r) =>
      r.out
        .trim()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l).run_id as string),
    );
    const detail = JSON.stringify(results);
    // No writer lock: the loser of each run finds it recorded (duplicate_run, exit 1).
    for (const r of results) expect([0, 1], detail).toContain(r.code);
    expect(new Set(printed).size, detail).toBe(printed.length);

    const log = await EmbeddedLog.open(dir, { readOnly: true });
    const events = await EventStore.create(log, new SqliteSchemaStore(dir, { readOnly: true }));
    const stream = log.runStream(events);
    const ids = new Set((await log.read('loopguard.runs', 0)).map((r) => r.key));
    expect([...ids].sort()).toEqual([...printed].sort());
    for (const id of ids) {
      const history = await stream.readStream(id);
      expect(history.map((e) => e.seq)).toEqual(history.map((_, i) => i + 1));
      expect(history.filter((e) => e.event.type === 'RunStarted')).toHaveLength(1);
    }
    await log.close();
  }, 60_000);
});
