/**
 * What the run rows tests compare: the embedded store's run rows (src/log/embedded/run-rows.ts) as
 * the table holds them, and the rows RunListFold folds from the same log; and varied runs written
 * through the library, with waits begun and ended, stops by several rules, resumes, several
 * tenants and results held for the run's next write.
 */
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { openEmbeddedStore } from '../../src/cli/open-store.js';
import { DB_FILE } from '../../src/log/embedded/database.js';
import { ManualClock } from '../../src/machines/index.js';
import { createGuard, outcome, ToolError } from '../../src/runtime/index.js';
import { RunListFold } from '../../src/timeline/run-list-fold.js';

export interface FilterRow {
  readonly runId: string;
  readonly state: string;
  readonly rule: string | null;
  readonly tenant: string | null;
}

/** The table's rows in list order; null when they are not the log's (no table, or records not folded). */
export function tableRows(dir: string): FilterRow[] | null {
  const db = new DatabaseSync(join(dir, DB_FILE), { readOnly: true });
  try {
    const has = db.prepare("SELECT 1 AS y FROM sqlite_master WHERE name = 'records_rows_pending'").get();
    if (has === undefined) return null;
    const { m } = db
      .prepare('SELECT min(topic_offset) AS m FROM records WHERE run_id IS NOT NULL AND rows_folded IS NULL')
      .get() as { m: number | null };
    if (m !== null) return null;
    return (
      db.prepare('SELECT run_id, status, rule, tenant FROM run_rows ORDER BY first_offset').all() as {
        run_id: string;
        status: string;
        rule: string | null;
        tenant: string | null;
      }[]
    ).map((r) => ({ runId: r.run_id, state: r.status, rule: r.rule, tenant: r.tenant }));
  } finally {
    db.close();
  }
}

/** RunListFold's rows over the whole log (what the ui's filtered pages were served from). */
export async function foldedRows(dir: string): Promise<FilterRow[]> {
  const store = await openEmbeddedStore(dir, { readOnly: true });
  try {
    const fold = new RunListFold();
    await store.scan((r) => fold.apply(r));
    return fold.rows().map((r) => ({ runId: r.runId, state: r.state, rule: r.rule, tenant: r.tenant }));
  } finally {
    await store.close();
  }
}

const ok = () => 'ok';
const rateLimited = () => {
  throw new ToolError('RETRYABLE', 'rate_limited', 'slow down', 1000);
};

/**
 * Runs of every kind through the library (its writer holds each result for the run's next write),
 * on a clock the test moves: `prefix` names them, so a data dir can take several rounds. Some are
 * left live, one of them waiting, and the guard is closed (its held results written) unless
 * `keepOpen`.
 */
export async function libraryRuns(dir: string, prefix = '', keepOpen = false) {
  const clock = new ManualClock(1_000);
  const guard = await createGuard({ dataDir: dir, clock, secretKey: 'rows', policy: { maxSteps: 12 } });
  const id = (s: string) => `${prefix}${s}`;

  // A wait begun by a RETRYABLE, a retry told to wait, another tool run during the backoff (the
  // wait goes on), then the retry once the backoff ran out (the wait ends); then done.
  const retry = await guard.startRun({ runId: id('retry'), tenant: 'acme', taskType: 'search' });
  await retry.call({ tool: 'api', args: { q: 1 } }, rateLimited);
  clock.advance(10);
  await retry.call({ tool: 'api', args: { q: 1 } }, ok);
  await retry.call({ tool: 'notes', args: { n: 1 } }, ok);
  clock.advance(5_000);
  await retry.call({ tool: 'api', args: { q: 1 } }, ok);
  await retry.finish({ verified: true });

  // Polled while pending: each poll waits, the next one ends the wait; left waiting.
  const poll = await guard.startRun({ runId: id('poll'), tenant: 'globex' });
  for (let i = 0; i < 3; i++) {
    await poll.call({ tool: 'job', args: { id: 7 } }, () => outcome.pending({ state: 'queued', i }));
    clock.advance(60_000);
  }

  // The same call again and again: stopped by exact_repeat, resumed, stopped again.
  const repeat = await guard.startRun({ runId: id('repeat'), tenant: 'acme' });
  for (let i = 0; i < 4; i++) await repeat.call({ tool: 'ls', args: { path: '/' } }, ok);
  await guard.resume(id('repeat'), { preconditionChange: 'new files', approvedBy: 'ops' });
  for (let i = 0; i < 4; i++) await repeat.call({ tool: 'ls', args: { path: '/' } }, ok);

  // Out of steps: the step budget's rule; no tenant.
  const long = await guard.startRun({ runId: id('long') });
  for (let i = 0; i < 14; i++) await long.call({ tool: 'read', args: { page: i } }, () => `page ${i}`);

  // A fatal answer: NEEDS_HUMAN; then a cancel on a live run.
  const denied = await guard.startRun({ runId: id('denied'), tenant: 'initech' });
  await denied.call({ tool: 'rm', args: { path: '/x' } }, () => {
    throw new ToolError('FATAL', 'permission_denied');
  });
  const cancelled = await guard.startRun({ runId: id('cancelled'), tenant: 'globex' });
  await cancelled.call({ tool: 'read', args: { page: 1 } }, ok);
  await cancelled.cancel('enough');

  // Live: a call done, its result still held when the guard is closed.
  const live = await guard.startRun({ runId: id('live'), tenant: 'initech' });
  await live.call({ tool: 'read', args: { page: 2 } }, ok);

  if (!keepOpen) await guard.close();
  return guard;
}
