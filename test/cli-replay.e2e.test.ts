import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, tempDirs } from './support/cli-run.js';

const fixture = (name: string) => join(import.meta.dirname, 'fixtures', name);
const tmp = tempDirs('lg-cli-');

const run = (args: string[]) => runCli(args);

describe('loopguard replay', () => {
  it('prints one JSON line per run with exactly the documented keys', async () => {
    const { code, out } = await run(['replay', fixture('mixed.jsonl'), '--json', '--data-dir', tmp()]);
    expect(code).toBe(0);
    const lines = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => Object.keys(l))).toEqual(
      lines.map(() => [
        'run_id',
        'terminal_state',
        'rule',
        'stop_step',
        'calls_total',
        'calls_executed',
        'calls_cached',
      ]),
    );
    expect(lines).toEqual([
      {
        run_id: 'fx/repeat',
        terminal_state: 'STOPPED_LOOP_GUARD',
        rule: 'exact_repeat',
        stop_step: 2,
        calls_total: 3,
        calls_executed: 2,
        calls_cached: 0,
      },
      {
        run_id: 'fx/paging',
        terminal_state: 'COMPLETED',
        rule: null,
        stop_step: null,
        calls_total: 3,
        calls_executed: 3,
        calls_cached: 0,
      },
      {
        run_id: 'fx/unknown',
        terminal_state: 'PARTIAL',
        rule: null,
        stop_step: null,
        calls_total: 1,
        calls_executed: 1,
        calls_cached: 0,
      },
      {
        run_id: 'fx/pay',
        terminal_state: 'COMPLETED',
        rule: null,
        stop_step: null,
        calls_total: 2,
        calls_executed: 1,
        calls_cached: 1,
      },
      {
        run_id: 'fx/fatal',
        terminal_state: 'NEEDS_HUMAN',
        rule: 'policy_blocked',
        stop_step: 1,
        calls_total: 2,
        calls_executed: 1,
        calls_cached: 0,
      },
    ]);
  });

  it('gives the same output byte for byte on the same input', async () => {
    const a = await run(['replay', fixture('mixed.jsonl'), '--data-dir', tmp()]);
    const b = await run(['replay', fixture('mixed.jsonl'), '--data-dir', tmp()]);
    expect(a.out).toBe(b.out);
    expect(a.out).toContain('runs 5; stopped by the guard 2');
  });

  it('rejects bad lines naming the line and field, and replays the others', async () => {
    const { code, out, err } = await run(['replay', fixture('bad.jsonl'), '--json', '--data-dir', tmp()]);
    expect(code).toBe(1);
    expect(
      out
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).run_id),
    ).toEqual(['ok/1', 'ok/2']);
    expect(err).toMatch(/bad\.jsonl:2: \(line\): malformed JSON/);
    expect(err).toMatch(/bad\.jsonl:3: run_id: missing/);
    expect(err).toMatch(/bad\.jsonl:4: calls\[0\]\.kind: expected one of SUCCESS/);
  });

  it('refuses to record a run id twice in one data dir', async () => {
    const dir = tmp();
    await run(['replay', fixture('mixed.jsonl'), '--data-dir', dir]);
    const again = await run(['replay', fixture('mixed.jsonl'), '--json', '--data-dir', dir]);
    expect(again.code).toBe(1);
    expect(again.out).toBe('');
    expect(again.err).toMatch(/run_id fx\/repeat: already recorded/);
  });

  it('names a bad policy field', async () => {
    await expect(
      run(['replay', fixture('mixed.jsonl'), '--policy', fixture('bad-policy.json'), '--data-dir', tmp()]),
    ).rejects.toThrow(/tools\.pay\.maxCalls: must not be negative/);
  });
});

describe('loopguard rebuild, audit, stops', () => {
  it('rebuild prints the same per-run lines as the live replay', async () => {
    const dir = tmp();
    const live = await run(['replay', fixture('mixed.jsonl'), '--json', '--data-dir', dir]);
    const rebuilt = await run(['rebuild', '--json', '--data-dir', dir]);
    const lines = rebuilt.out.trim().split('\n');
    expect(`${lines.slice(0, -1).join('\n')}\n`).toBe(live.out);
    const counts = JSON.parse(lines.at(-1) ?? '{}');
    expect(counts).toMatchObject({ runs: 5, stops: 5, ledger: 1 });
    expect(counts.events).toBeGreaterThan(20);
  });

  it('audit answers which rule blocked which call', async () => {
    const dir = tmp();
    await run(['replay', fixture('mixed.jsonl'), '--data-dir', dir]);
    const text = await run(['audit', 'fx/repeat', '--data-dir', dir]);
    expect(text.out).toMatch(
      /step-2 {2}search \{"q":"a"\}\n {6}before: stop_partial by exact_repeat \(repeats=2 sameCallLimit=2/,
    );
    const json = await run(['audit', 'fx/repeat', '--json', '--data-dir', dir]);
    const calls = JSON.parse(json.out).timeline.filter((t: { kind: string }) => t.kind === 'call');
    expect(calls.map((c: { before: { decision: string } }) => c.before.decision)).toEqual([
      'execute',
      'execute',
      'stop_partial',
    ]);
    await expect(run(['audit', 'nope', '--data-dir', dir])).rejects.toMatchObject({ code: 'unknown_run' });
  });

  it('stops lists every stop report with its terminal state', async () => {
    const dir = tmp();
    await run(['replay', fixture('mixed.jsonl'), '--data-dir', dir]);
    const { out } = await run(['stops', '--json', '--data-dir', dir]);
    const reports = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(reports.map((r) => [r.run_id, r.report.terminal_state])).toEqual([
      ['fx/repeat', 'STOPPED_LOOP_GUARD'],
      ['fx/paging', 'COMPLETED'],
      ['fx/unknown', 'PARTIAL'],
      ['fx/pay', 'COMPLETED'],
      ['fx/fatal', 'NEEDS_HUMAN'],
    ]);
  });

  it('demo runs the bundled examples and shows the audit of the stopped run', async () => {
    const { code, out } = await run(['demo']);
    expect(code).toBe(0);
    expect(out).toMatch(/demo\/exact-repeat +STOPPED_LOOP_GUARD +exact_repeat/);
    expect(out).toMatch(/demo\/duplicate-payment +COMPLETED .* 3\/4 +1/);
    expect(out).toContain('audit of demo/exact-repeat');
  });
});
