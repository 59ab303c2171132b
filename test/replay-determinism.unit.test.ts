/**
 * Deterministic by construction: what the guard decides depends on the run's own events and
 * nothing else in the process (no memo, ring or cache a fold could read). Live equals rebuilt,
 * a fresh process re-decides every recorded run alike, and a what-if under the policy a run was
 * recorded under changes nothing.
 */

import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import {
  cachedDiceSimilarity,
  DEFAULT_POLICY,
  diceSimilarity,
  initialState,
  type Policy,
  parsePolicy,
} from '../src/domain/index.js';
import { SqliteLedger } from '../src/log/embedded/sqlite-ledger.js';
import { foldRun, ManualClock } from '../src/machines/index.js';
import { Guard } from '../src/runtime/guard.js';
import { nodeHashing } from '../src/runtime/node-hashing.js';
import { replayRun } from '../src/trace/replay.js';
import { RecordedRunFold, whatIf } from '../src/whatif/index.js';
import { tempDirs } from './support/cli-run.js';
import { memoryStream } from './support/memory-stream.js';
import { recordedTraces, redecide } from './support/recorded-traces.js';

const tempDir = tempDirs('lg-determinism-');

describe('live equals rebuilt', () => {
  it("given a call with an 'off-set' argument, then 20 calls of another run, a rebuild records the same intent", async () => {
    const store = await memoryStream();
    const guard = new Guard({
      store,
      ledger: SqliteLedger.open(tempDir()),
      secretKey: 'test-key',
      clock: new ManualClock(0),
    });
    const run = await guard.startRun({ runId: 'refunds' });
    await run.call({ tool: 'search', args: { q: 'refund', 'off-set': 0 } }, () => 'refund policy');
    const other = await guard.startRun({ runId: 'other' });
    for (let i = 0; i < 20; i++)
      await other.call({ tool: 'lookup', args: { item: `sku-${i}`, page: i } }, () => `item ${i}`);
    const live = run.state;
    await guard.close();
    const rebuilt = (await store.readStream('refunds')).reduce(foldRun, initialState('refunds'));
    // `off-set` is an offset (names compare without punctuation), so the intent is the query alone.
    expect(live.asked.search).toEqual([
      expect.objectContaining({ intent: '{"q":"refund"}', resultHash: expect.any(String) }),
    ]);
    expect(rebuilt.asked).toEqual(live.asked);
    expect(rebuilt).toEqual(live);
  });
});

describe('replay of every recorded run of the shared traces', () => {
  const runs = recordedTraces();
  const hashing = nodeHashing('replay-determinism');

  it('re-decides each run in a fresh process, with cold caches and in another order, to the identical events', () => {
    // This process replays in file order with one warm cache across all runs; the child replays
    // in reverse order with a similarity that remembers nothing.
    const here = redecide(runs, { hashing, similarity: cachedDiceSimilarity() });
    const child = spawnSync(process.execPath, ['--import', 'tsx', 'test/replay-traces-child.ts'], {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    expect(child.status, child.stderr).toBe(0);
    const there = JSON.parse(child.stdout) as Record<string, string>;
    expect(Object.keys(here)).toHaveLength(runs.length);
    const differ = Object.keys(here).filter((id) => here[id] !== there[id]);
    expect(differ).toEqual([]);
    expect(Object.keys(there).sort()).toEqual(Object.keys(here).sort());
  }, 240_000);

  const whatIfRows = (recordedUnder: Policy, askedUnder: Policy) => {
    const deps = { hashing, similarity: diceSimilarity };
    const recording = new RecordedRunFold();
    for (const run of runs) for (const e of replayRun(run, recordedUnder, deps).events) recording.apply(e);
    return recording.runIds().map((id) => {
      const recorded = recording.run(id);
      if (recorded === undefined) throw new Error(`no recorded run ${id}`);
      return whatIf(recorded, askedUnder, deps);
    });
  };
  const changed = (rows: ReturnType<typeof whatIfRows>) =>
    rows.filter((r) => r.change !== 'same' || r.calls_saved !== 0 || r.calls_lost !== 0);

  it('whatif with the policy each run was recorded under reports no run changed', () => {
    const strict = parsePolicy({
      maxToolCalls: 4,
      sameCallLimit: 1,
      nearDuplicate: { threshold: 0.6, limit: 1 },
    });
    if (!strict.ok) throw strict.error;
    for (const policy of [DEFAULT_POLICY, strict.value]) {
      const rows = whatIfRows(policy, policy);
      expect(rows).toHaveLength(runs.length);
      expect(changed(rows)).toEqual([]);
    }
    // The same recording asked under another policy does change runs: the comparison can fail.
    expect(changed(whatIfRows(DEFAULT_POLICY, strict.value)).length).toBeGreaterThan(0);
  }, 240_000);
});
