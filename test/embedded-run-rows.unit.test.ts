import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { openEmbeddedStore } from '../src/cli/open-store.js';
import { DEFAULT_POLICY, type RecordedEvent } from '../src/domain/index.js';
import { EventCodec, MemorySchemaStore } from '../src/events/index.js';
import { DB_FILE } from '../src/log/embedded/database.js';
import { EmbeddedLog } from '../src/log/embedded/embedded-log.js';
import { SqliteSchemaStore } from '../src/log/embedded/sqlite-schema-store.js';
import { TOPICS } from '../src/log/event-log.js';
import { EventStore } from '../src/log/event-store.js';
import { RunListFold } from '../src/timeline/run-list-fold.js';
import { type RunFilters, viewOf } from '../src/timeline/run-list-page.js';
import { replayRun } from '../src/trace/replay.js';
import { captureIo } from './support/capture-io.js';
import { tempDirs } from './support/cli-run.js';
import { deps } from './support/given.js';
import { killWriterAfter } from './support/kill-writer.js';
import { recordedTraces } from './support/recorded-traces.js';
import { foldedRows, libraryRuns, tableRows } from './support/run-rows.js';

const tmp = tempDirs('lg-run-rows-');

/** Every run of `dir`, in order of first appearance, with its events. */
async function runsOf(dir: string): Promise<RecordedEvent[][]> {
  const store = await openEmbeddedStore(dir, { readOnly: true });
  try {
    const { runIds } = await (store.runIndex?.page(0, Number.POSITIVE_INFINITY) ?? Promise.reject());
    return Promise.all(runIds.map((id) => store.stream.readStream(id)));
  } finally {
    await store.close();
  }
}

/** A run's events under another id (its start names it too). */
const renamed = (events: readonly RecordedEvent[], runId: string): RecordedEvent[] =>
  events.map((r) => ({
    ...r,
    runId,
    eventId: `${runId}/${r.seq}`,
    event: r.event.type === 'RunStarted' ? { ...r.event, runId } : r.event,
  }));

async function openEvents(dir: string) {
  const log = await EmbeddedLog.open(dir, { fsync: 'none' });
  const schemas = new SqliteSchemaStore(dir, { fsync: 'none' });
  const events = await EventStore.create(log, schemas);
  return { log, events, stream: log.runStream(events), close: () => log.close() };
}

async function expectExact(dir: string): Promise<void> {
  const rows = tableRows(dir);
  expect(rows, "the rows are the log's (folded to its end)").not.toBeNull();
  expect(rows).toEqual(await foldedRows(dir));
}

describe("the embedded store's run rows", () => {
  it('are the rows RunListFold gives for runs the library writes, held results and all', async () => {
    const dir = tmp();
    const guard = await libraryRuns(dir, '', true);
    // Results still held by the open guard are in neither the log nor the rows.
    await expectExact(dir);
    await guard.close();
    await expectExact(dir);
    await libraryRuns(dir, 'again-');
    await expectExact(dir);
    const rows = tableRows(dir) ?? [];
    expect(new Set(rows.map((r) => r.state))).toEqual(
      new Set(['COMPLETED', 'WAITING', 'STOPPED_LOOP_GUARD', 'NEEDS_HUMAN', 'PARTIAL', 'RUNNING']),
    );
    expect(new Set(rows.map((r) => r.rule))).toEqual(
      new Set(['backoff', 'exact_repeat', 'step_budget', 'permission_denied', null]),
    );
    expect(new Set(rows.map((r) => r.tenant))).toEqual(new Set(['acme', 'globex', 'initech', null]));
  }, 30_000);

  it('are those rows for runs written without the writer status: whole runs, bare records, replays', async () => {
    const source = tmp();
    await libraryRuns(source);
    const runs = await runsOf(source);
    const dir = tmp();
    const { log, events, stream, close } = await openEvents(dir);
    try {
      // As `loopguard replay` records: each run in one append, no status from a run machine.
      for (const [i, run] of runs.entries())
        await stream.appendToStream(`whole-${i}`, renamed(run, `whole-${i}`), { expectedStreamVersion: 0 });
      // Records without their events (decoded from the store), an event per append, runs interleaved.
      const bare = runs.map((run, i) => renamed(run, `bare-${i}`));
      for (let seq = 0; bare.some((run) => seq < run.length); seq++)
        for (const run of bare) {
          const r = run[seq];
          if (r === undefined) continue;
          const { event: _, ...record } = events.runRecord(r);
          await log.append(TOPICS.runs, [record]);
        }
      // Recorded agent runs, replayed under the default policy.
      for (const trace of recordedTraces().slice(0, 150)) {
        const { events: replayed } = replayRun(trace, DEFAULT_POLICY, deps);
        await stream.appendToStream(trace.run_id, replayed, { expectedStreamVersion: 0 });
      }
    } finally {
      await close();
    }
    await expectExact(dir);
    const rows = tableRows(dir) ?? [];
    expect(rows.filter((r) => r.runId.startsWith('bare-'))).toEqual(
      (tableRows(source) ?? []).map((r, i) => ({ ...r, runId: `bare-${i}` })),
    );
    expect(new Set(rows.map((r) => r.state)).size).toBeGreaterThanOrEqual(5);
  }, 60_000);

  it('serve filtered pages with the rows, counts and order of a fold of the whole log', async () => {
    const dir = tmp();
    await libraryRuns(dir, 'a-');
    await libraryRuns(dir, 'b-');
    const store = await openEmbeddedStore(dir, { readOnly: true });
    try {
      const full = new RunListFold();
      await store.scan((r) => full.apply(r));
      const filters: RunFilters[] = [
        { state: 'WAITING' },
        { state: 'STOPPED_LOOP_GUARD' },
        { rule: 'exact_repeat' },
        { tenant: 'acme' },
        { state: 'STOPPED_LOOP_GUARD', tenant: 'acme' },
        { state: 'RUNNING', rule: 'nothing', tenant: 'acme' },
      ];
      for (const f of filters)
        for (const p of [
          { offset: 0, limit: 100 },
          { offset: 1, limit: 1 },
        ]) {
          const page = await store.runIndex?.filtered(f, p.offset, p.limit);
          if (page === undefined || page === null) throw new Error('no page from the run rows');
          const fold = new RunListFold();
          for (const run of page.runs) for (const r of run) fold.apply(r);
          const want = viewOf(full.rows(), f, p);
          expect(
            { rows: fold.rows(), matching: page.matching, total: page.total },
            JSON.stringify(f),
          ).toEqual(want);
        }
    } finally {
      await store.close();
    }
  }, 30_000);

  it('are folded from the log by the next writable open of a store written before them, or by repair', async () => {
    const written = tmp();
    await libraryRuns(written);
    const want = await foldedRows(written);
    const old = tmp();
    cpSync(written, old, { recursive: true });
    const db = new DatabaseSync(join(old, DB_FILE));
    db.exec(
      'DROP INDEX records_rows_pending; DROP TABLE run_rows; ALTER TABLE records DROP COLUMN rows_folded;',
    );
    db.close();
    const repaired = tmp();
    cpSync(old, repaired, { recursive: true });

    // Read-only, an old store keeps what it has: no rows, so the ui folds the log.
    const reader = await openEmbeddedStore(old, { readOnly: true });
    expect(reader.runIndex?.rowsKept).toBe(false);
    expect(await reader.runIndex?.filtered({ state: 'WAITING' }, 0, 10)).toBeNull();
    await reader.close();
    expect(tableRows(old)).toBeNull();

    await (await EmbeddedLog.open(old)).close();
    expect(tableRows(old)).toEqual(want);

    expect(await main(['repair', '--data-dir', repaired], captureIo())).toBe(0);
    expect(tableRows(repaired)).toEqual(want);
  }, 30_000);

  it('fall behind, never wrong, under records an older writer made, and the next append catches up', async () => {
    const dir = tmp();
    await libraryRuns(dir);
    const [first] = await runsOf(dir);
    const { events, close } = await openEvents(dir);
    // An older loopguard appends a run's records and knows nothing of the rows.
    const db = new DatabaseSync(join(dir, DB_FILE));
    const { m } = db
      .prepare('SELECT max(topic_offset) AS m FROM records WHERE topic = ?')
      .get(TOPICS.runs) as {
      m: number;
    };
    const insert = db.prepare(
      'INSERT INTO records (topic, topic_offset, key, run_id, seq, at_ms, headers, value) VALUES (?, ?, ?, ?, ?, 0, ?, ?)',
    );
    for (const [i, r] of renamed(first ?? [], 'older').entries()) {
      const rec = events.runRecord(r);
      insert.run(TOPICS.runs, m + 1 + i, 'older', 'older', r.seq, JSON.stringify(rec.headers), rec.value);
    }
    db.close();
    await close();
    expect(tableRows(dir)).toBeNull();
    const reader = await openEmbeddedStore(dir, { readOnly: true });
    expect(await reader.runIndex?.filtered({}, 0, 10)).toBeNull();
    await reader.close();

    await libraryRuns(dir, 'newer-');
    await expectExact(dir);
    expect(tableRows(dir)?.find((r) => r.runId === 'older')?.state).toBe('COMPLETED');
  }, 30_000);

  it('stop before a record they cannot read and stay behind it, while appends go on', async () => {
    const dir = tmp();
    await libraryRuns(dir);
    const log = await EmbeddedLog.open(dir, { fsync: 'none' });
    try {
      await log.append(TOPICS.runs, [{ key: 'junk', value: Buffer.from('not an event') }]);
      await log.append(TOPICS.runs, [{ key: 'more', value: Buffer.from('nor this') }]);
      expect(await log.filteredRunPage({}, 0, 10)).toBeNull();
    } finally {
      await log.close();
    }
    const db = new DatabaseSync(join(dir, DB_FILE), { readOnly: true });
    const { n } = db.prepare("SELECT count(*) AS n FROM run_rows WHERE run_id IN ('junk', 'more')").get() as {
      n: number;
    };
    db.close();
    expect(n).toBe(0);
    expect(tableRows(dir)).toBeNull();
  });

  it('take up a record they could not read once the store can: the next append folds from it on', async () => {
    const source = tmp();
    await libraryRuns(source);
    const [run] = await runsOf(source);
    const dir = tmp();
    // Framed with the schema id of a store of its own, which this one does not hold yet.
    const foreign = await EventCodec.create(new MemorySchemaStore(), `${TOPICS.runs}-value`);
    const log = await EmbeddedLog.open(dir, { fsync: 'none' });
    for (const r of renamed(run ?? [], 'early'))
      await log.append(TOPICS.runs, [{ key: 'early', value: foreign.encode(r) }]);
    await log.close();
    expect(tableRows(dir)).toBeNull();
    // The store registers the same schema under the same id: the records read now.
    await libraryRuns(dir, 'later-');
    await expectExact(dir);
    expect(tableRows(dir)?.[0]?.runId).toBe('early');
  }, 30_000);

  it("are the log's after a writer is killed between its writes", async () => {
    const dir = tmp();
    // In the middle of a round: some runs live, some waiting, results held.
    const { signal, out, err } = await killWriterAfter('test/run-rows-crash-writer.ts', [dir], {
      lines: 3,
      withinMs: 30_000,
      thenMs: 37,
    });
    expect(signal, err).toBe('SIGKILL');
    expect(out.match(/\n/g)?.length ?? 0, err).toBeGreaterThanOrEqual(3);
    await expectExact(dir);
  }, 60_000);
});
