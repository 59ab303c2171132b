/**
 * `loopguard migrate` on a data dir the segment log wrote (test/fixtures/segment-data-dir: a
 * guarded run with a paid side effect and the example runs replayed, by loopguard before the
 * SQLite store): every record keeps its offset and bytes, schemas their ids, the ledger its
 * entries; the commands read the result as before.
 */
import { appendFileSync, cpSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { EmbeddedLog } from '../src/log/embedded/embedded-log.js';
import { decodeRecord, scanRecords } from '../src/log/embedded/segment-format.js';
import { createGuard, SqliteLedger } from '../src/runtime/index.js';
import { captureIo } from './support/capture-io.js';
import { foldedRows, tableRows } from './support/run-rows.js';

const FIXTURE = join(import.meta.dirname, 'fixtures', 'segment-data-dir');
let dir: string;
beforeEach(async () => {
  dir = join(await mkdtemp(join(tmpdir(), 'lg-migrate-')), 'data');
  cpSync(FIXTURE, dir, { recursive: true });
});
afterEach(async () => {
  await rm(join(dir, '..'), { recursive: true, force: true });
});

/** What the segment files hold, read with the segment reader: topic -> [offset, key, value hex]. */
function segmentRecords(root: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const topic of readdirSync(join(root, 'topics'))) {
    const rows: string[] = [];
    for (const seg of readdirSync(join(root, 'topics', topic)).filter((n) => n.endsWith('.seg'))) {
      const buf = readFileSync(join(root, 'topics', topic, seg));
      for (const p of scanRecords(buf, rows.length).positions) {
        const { record } = decodeRecord(topic, buf, p);
        rows.push(`${record.offset} ${record.key} ${record.value.toString('hex')}`);
      }
    }
    out.set(topic, rows);
  }
  return out;
}

describe('loopguard migrate', () => {
  it('converts a segment-log data dir: the same records, bytes, schema ids and ledger', async () => {
    const before = segmentRecords(dir);
    await expect(main(['audit', 'demo/ping-pong', '--data-dir', dir], captureIo())).rejects.toMatchObject({
      code: 'needs_migration',
    });
    const io = captureIo();
    expect(await main(['migrate', '--data-dir', dir], io)).toBe(0);
    expect(io.stdout()).toMatch(/migrated to the SQLite store: records .*loopguard\.runs \d+/);
    expect(existsSync(join(dir, 'topics'))).toBe(false);
    expect(readdirSync(join(dir, 'segment-log')).sort()).toEqual(['ledger', 'schemas', 'topics']);

    const log = await EmbeddedLog.open(dir, { readOnly: true });
    for (const [topic, rows] of before) {
      const now = (await log.read(topic, 0)).map((r) => `${r.offset} ${r.key} ${r.value.toString('hex')}`);
      expect(now).toEqual(rows);
    }
    await log.close();
    // The run rows, folded by the migration itself (nothing has opened the store for writing yet).
    const rows = tableRows(dir);
    expect(rows?.map((r) => r.runId)).toContain('demo/ping-pong');
    expect(rows).toEqual(await foldedRows(dir));

    const audit = captureIo();
    expect(await main(['audit', 'demo/ping-pong', '--data-dir', dir], audit)).toBe(0);
    expect(audit.stdout()).toMatch(/short_cycle/);
    const ledger = SqliteLedger.open(dir);
    expect(await ledger.get('acme:pay:A1')).toMatchObject({
      status: 'completed',
      owner: { runId: 'shop-1' },
      resultJson: '{"paymentId":"p-1"}',
    });
    await ledger.close();
    // A guard on the migrated dir: the paid operation is still paid, and new runs record.
    const guard = await createGuard({ dataDir: dir, policy: { tools: { pay: { sideEffect: true } } } });
    const run = await guard.startRun({ runId: 'after-migrate' });
    const pay = { tool: 'pay', args: { order: 'A1' }, sideEffect: true, operationKey: 'acme:pay:A1' };
    expect(await run.call(pay, () => ({ paymentId: 'p-again' }))).toMatchObject({
      status: 'cached',
      value: { paymentId: 'p-1' },
    });
    await guard.close();
  });

  it('leaves out a torn last record (never acknowledged) and says so', async () => {
    const seg = join(dir, 'topics', 'loopguard.runs', '00000000000000000000.seg');
    const count = segmentRecords(dir).get('loopguard.runs')?.length;
    appendFileSync(seg, Buffer.from([0, 0, 1, 0, 9, 9, 9]));
    const io = captureIo();
    expect(await main(['migrate', '--data-dir', dir], io)).toBe(0);
    expect(io.stdout()).toMatch(/torn last record .* was left out/);
    const log = await EmbeddedLog.open(dir, { readOnly: true });
    expect(await log.endOffset('loopguard.runs')).toBe(count);
    await log.close();
  });

  it('refuses a second migration and a dir that is no segment log, changing nothing', async () => {
    expect(await main(['migrate', '--data-dir', dir], captureIo())).toBe(0);
    await expect(main(['migrate', '--data-dir', dir], captureIo())).rejects.toMatchObject({
      code: 'migrate_refused',
      message: expect.stringContaining('already on the SQLite store'),
    });
    const empty = join(dir, '..', 'empty');
    await expect(main(['migrate', '--data-dir', empty], captureIo())).rejects.toMatchObject({
      code: 'migrate_refused',
    });
    expect(existsSync(empty)).toBe(false);
  });
});
