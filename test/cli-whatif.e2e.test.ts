import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { createGuard } from '../src/runtime/index.js';
import { captureIo } from './support/capture-io.js';
import { runCli } from './support/cli-run.js';

const examples = join(import.meta.dirname, '..', 'examples');
let dir: string;
let data: string;

const run = (args: string[]) => runCli(args, {});

const policyFile = (name: string, policy: unknown) => {
  const p = join(dir, name);
  writeFileSync(p, JSON.stringify(policy));
  return p;
};

/** Every file under the data dir with its bytes: what "the log is unchanged" means. */
const contents = (root: string): Record<string, string> => {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const f of readdirSync(d)) {
      const p = join(d, f);
      if (statSync(p).isDirectory()) walk(p);
      else out[p] = readFileSync(p).toString('base64');
    }
  };
  walk(root);
  return out;
};

const jsonLines = (out: string) =>
  out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'lg-whatif-'));
  data = join(dir, 'data');
  const r = await run([
    'replay',
    join(examples, 'runs.jsonl'),
    '--policy',
    join(examples, 'policy.json'),
    '--data-dir',
    data,
  ]);
  expect(r.code).toBe(0);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('loopguard whatif', () => {
  it('given the recorded policy, every run is unchanged and nothing is saved or lost', async () => {
    const r = await run(['whatif', '--policy', join(examples, 'policy.json'), '--data-dir', data, '--json']);
    expect(r.code).toBe(0);
    const rows = jsonLines(r.out);
    expect(rows.at(-1)).toEqual({
      runs: 6,
      earlier: 0,
      same: 6,
      later: 0,
      not_at_all: 0,
      calls_saved: 0,
      calls_lost: 0,
    });
    expect(rows.find((x) => x.run_id === 'demo/ping-pong')).toMatchObject({
      recorded_stop: 3,
      recorded_rule: 'short_cycle',
      whatif_stop: 3,
      whatif_rule: 'short_cycle',
    });
  });

  it('a looser policy lets the loops run: not at all, with the calls past the recorded stop lost', async () => {
    const loose = policyFile('loose.json', { sameCallLimit: 4, rules: { short_cycle: 'off' } });
    const r = await run(['whatif', '--policy', loose, '--data-dir', data, '--json']);
    const rows = jsonLines(r.out);
    // exact-repeat: 4 identical calls, recorded stop at the third; ping-pong: 6 calls, stop at the fourth.
    expect(rows.find((x) => x.run_id === 'demo/exact-repeat')).toMatchObject({
      change: 'not_at_all',
      whatif_stop: null,
      calls_lost: 2,
      beyond_recording: true,
    });
    expect(rows.find((x) => x.run_id === 'demo/ping-pong')).toMatchObject({
      change: 'not_at_all',
      calls_lost: 3,
    });
    expect(rows.at(-1)).toMatchObject({ not_at_all: 2, same: 4, calls_lost: 5, calls_saved: 0 });
  });

  it('a tighter step budget stops runs earlier and counts the calls it saves, in a table', async () => {
    const tight = policyFile('tight.json', { maxSteps: 2 });
    const before = contents(data);
    const r = await run(['whatif', '--policy', tight, '--data-dir', data]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^demo\/polling\s+earlier\s+-\s+2 step_budget\s+5\s+0\s*$/m);
    expect(r.out).toMatch(/^demo\/exact-repeat\s+same\s+2 exact_repeat\s+2 step_budget\s+0\s+0\s*$/m);
    expect(r.out).toContain(
      'runs 6: would stop earlier 4, later 0, not at all 0, unchanged 2; calls saved 11, calls lost 0',
    );
    // The what-if only reads: the log's files are byte for byte what they were.
    expect(contents(data)).toEqual(before);
  });

  it('a run that went on after a refusal: stopping it at a later recorded call is "later", counted call by call', async () => {
    const live = join(dir, 'live');
    const guard = await createGuard({ dataDir: live, policy: { tools: { search: { maxCalls: 1 } } } });
    const live1 = await guard.startRun({ runId: 'live-1' });
    await live1.call({ tool: 'search', args: { q: 'a' } }, async () => 'r1');
    expect((await live1.call({ tool: 'search', args: { q: 'b' } }, async () => 'r2')).status).toBe('refused');
    await live1.call({ tool: 'fetch', args: { u: 1 } }, async () => 'f1');
    await live1.call({ tool: 'fetch', args: { u: 2 } }, async () => 'f2');
    await live1.finish({ verified: true });
    await guard.close();

    const twoSteps = policyFile('two-steps.json', { maxSteps: 2 });
    const [row] = jsonLines((await run(['whatif', '--policy', twoSteps, '--data-dir', live, '--json'])).out);
    // It lets the refused search run (a call the recording never ran), then stops the first fetch.
    expect(row).toEqual({
      run_id: 'live-1',
      change: 'later',
      recorded_stop: 1,
      recorded_rule: 'tool_budget',
      whatif_stop: 2,
      whatif_rule: 'step_budget',
      calls_saved: 2,
      calls_lost: 1,
      beyond_recording: true,
    });
  });

  it('the log keeps results as hashes: the recorded judgement of each answer carries a near-duplicate stop over', async () => {
    const live = join(dir, 'near');
    const guard = await createGuard({ dataDir: live });
    const asks = await guard.startRun({ runId: 'near-1' });
    const answer = async () => 'Refund policy: damaged orders are refunded within 14 days of delivery.';
    for (const q of [
      'refund policy for damaged orders',
      'refund policy for damaged order',
      'refund policies for damaged orders',
      'the refund policy for damaged orders',
    ])
      await asks.call({ tool: 'search_docs', args: { q } }, answer);
    await guard.close();
    const rows = jsonLines(
      (await run(['whatif', '--policy', policyFile('defaults.json', {}), '--data-dir', live, '--json'])).out,
    );
    expect(rows[0]).toMatchObject({
      run_id: 'near-1',
      change: 'same',
      recorded_stop: 3,
      recorded_rule: 'near_duplicate',
      whatif_rule: 'near_duplicate',
    });
  });

  it('on a terminal shows its progress apart from the table, which stays the same', async () => {
    const tty = captureIo({ tty: true });
    const args = ['whatif', '--policy', join(examples, 'policy.json'), '--data-dir', data];
    expect(await main(args, tty, { env: {} })).toBe(0);
    expect(tty.statusLine()).toMatch(/reading \[#+\] 100% [\d,]+\/[\d,]+ events/);
    expect(tty.statusLine()).toMatch(/re-deciding \[#+\] 100% 6\/6 runs/);
    expect(tty.stdout()).toBe((await run(args)).out);
  });

  it('needs --policy, and a bad policy is rejected with its field named', async () => {
    await expect(run(['whatif', '--data-dir', data])).rejects.toThrow(/--policy NEW.json/);
    const bad = policyFile('bad.json', { maxSteps: -1 });
    await expect(run(['whatif', '--policy', bad, '--data-dir', data])).rejects.toThrow(/maxSteps/);
  });
});
