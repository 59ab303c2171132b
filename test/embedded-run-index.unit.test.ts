/**
 * The embedded store's run index: runs in order of first appearance, a page at a time, counted
 * without reading the log; kept by SQLite in each append's transaction, and added to a store
 * written before it by the next writable open or by `loopguard repair`.
 */
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { RUN_STARTS_INDEX } from '../src/log/embedded/database.js';
import { EmbeddedLog } from '../src/log/embedded/embedded-log.js';
import { TOPICS } from '../src/log/event-log.js';
import { captureIo } from './support/capture-io.js';
import { tempDirs } from './support/cli-run.js';

const tmp = tempDirs('lg-run-index-');
const rec = (key: string) => ({ key, value: Buffer.from(key) });

/** Runs r0..r4 interleaved over three appends (r1 and r3 first seen in the second), stops copied too. */
async function written(dir: string): Promise<void> {
  const log = await EmbeddedLog.open(dir, { fsync: 'none' });
  await log.append(TOPICS.runs, [rec('r0'), rec('r2'), rec('r0')]);
  await log.append(TOPICS.stops, [rec('r0')]);
  await Promise.all([
    log.appendKeyed(TOPICS.runs, 'r1', 0, [rec('r1'), rec('r1')]),
    log.append(TOPICS.runs, [rec('r2'), rec('r3')]),
  ]);
  await log.append(TOPICS.runs, [rec('r4'), rec('r3'), rec('r0')]);
  await log.close();
}

describe('the embedded run index', () => {
  it('pages the runs in order of first appearance, with their count', async () => {
    const dir = tmp();
    await written(dir);
    const log = await EmbeddedLog.open(dir, { readOnly: true });
    try {
      expect(log.runIndexed).toBe(true);
      expect(await log.runPage(0, 100)).toEqual({ total: 5, runIds: ['r0', 'r2', 'r1', 'r3', 'r4'] });
      expect(await log.runPage(1, 2)).toEqual({ total: 5, runIds: ['r2', 'r1'] });
      expect(await log.runPage(5, 10)).toEqual({ total: 5, runIds: [] });
      await expect(log.runPage(-1, 10)).rejects.toThrow(/non-negative/);
    } finally {
      await log.close();
    }
  });

  it('answers the same on a store written before it, and repair adds it', async () => {
    const dir = tmp();
    await written(dir);
    const db = new DatabaseSync(join(dir, 'loopguard.db'));
    db.exec(`DROP INDEX ${RUN_STARTS_INDEX}`);
    db.close();
    const old = await EmbeddedLog.open(dir, { readOnly: true });
    expect(old.runIndexed).toBe(false);
    expect(await old.runPage(1, 3)).toEqual({ total: 5, runIds: ['r2', 'r1', 'r3'] });
    await old.close();

    expect(await main(['repair', '--data-dir', dir], captureIo())).toBe(0);
    const repaired = await EmbeddedLog.open(dir, { readOnly: true });
    expect(repaired.runIndexed).toBe(true);
    expect(await repaired.runPage(1, 3)).toEqual({ total: 5, runIds: ['r2', 'r1', 'r3'] });
    await repaired.close();
  });

  it('is added by the next writable open', async () => {
    const dir = tmp();
    await written(dir);
    const db = new DatabaseSync(join(dir, 'loopguard.db'));
    db.exec(`DROP INDEX ${RUN_STARTS_INDEX}`);
    db.close();
    const writer = await EmbeddedLog.open(dir);
    expect(writer.runIndexed).toBe(true);
    await writer.append(TOPICS.runs, [rec('r5')]);
    expect(await writer.runPage(4, 10)).toEqual({ total: 6, runIds: ['r4', 'r5'] });
    await writer.close();
  });
});
