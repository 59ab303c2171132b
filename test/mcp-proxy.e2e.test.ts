import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { captureIo } from './support/capture-io.js';
import { mcpSession } from './support/mcp-session.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function connect(flags: string[] = []) {
  const s = await mcpSession({ flags });
  dirs.push(s.dir);
  return s;
}

async function cli(args: string[]) {
  const io = captureIo();
  const code = await main(args, io);
  return { code, out: io.stdout() };
}

describe('loopguard mcp', () => {
  it('guards a session: tools listed unchanged, repeats refused, one charge, the run ends with the client', async () => {
    const s = await connect();
    const tools = await s.client.listTools();
    expect(tools.tools.map((t) => [t.name, t.annotations])).toEqual([
      ['search', { readOnlyHint: true }],
      ['pay', { destructiveHint: true }],
      ['broken', { readOnlyHint: true }],
      ['write', undefined],
      ['slow', { readOnlyHint: true }],
      ['burst', { readOnlyHint: true }],
      ['big', { readOnlyHint: true }],
      ['env', { readOnlyHint: true }],
    ]);
    expect(tools.tools[1]?.inputSchema.required).toEqual(['order', 'amount']);

    // The payment asked twice with the same arguments runs once; the second answer comes from the ledger.
    const first = await s.call('pay', { order: 'A1', amount: 30 });
    const again = await s.call('pay', { amount: 30, order: 'A1' });
    expect(s.text(first)).toBe('payment p-1: 30 for order A1');
    expect(again.isError ?? false).toBe(false);
    expect(s.text(again)).toMatch(/^payment p-1: 30 for order A1\n\[loopguard\] /);
    expect(s.charges()).toBe(1);
    // A different order is another operation: it runs.
    expect(s.text(await s.call('pay', { order: 'A2', amount: 30 }))).toBe('payment p-2: 30 for order A2');
    expect(s.charges()).toBe(2);
    // A tool the upstream does not list but accepts (an old name) is a side effect too: its retry
    // is answered from the ledger (before 2026-12-03 it ran again, a third charge).
    expect(s.text(await s.call('charge', { order: 'A9', amount: 1 }))).toBe('payment p-3: 1 for order A9');
    expect(s.text(await s.call('charge', { order: 'A9', amount: 1 }))).toMatch(
      /^payment p-3: 1 for order A9\n\[loopguard\] /,
    );
    expect(s.charges()).toBe(3);

    // The upstream's own failure passes through as it was, with the guard's classification after it.
    const broken = await s.call('broken');
    expect([broken.isError, s.text(broken)]).toEqual([
      true,
      'the docs index is offline\n[loopguard] broken needs a precondition first (tool_error); the same call is refused until it changes.',
    ]);

    // A tool the upstream does not have: its JSON-RPC error comes back as an error result, classified.
    const unknown = await s.call('refund', { order: 'A1' });
    expect([unknown.isError, s.text(unknown)]).toEqual([
      true,
      expect.stringMatching(
        /^upstream error -32602: .*Tool refund not found\n\[loopguard\] .*\(invalid_params\)/,
      ),
    ]);

    // The default sameCallLimit is 2: the third identical search is refused, and with the default
    // rule action (stop) that ends the run; the session goes on in a new run.
    const searches = [];
    for (let i = 0; i < 3; i++) searches.push(await s.call('search', { q: 'refund policy' }));
    expect(searches.slice(0, 2).map((r) => [r.isError ?? false, s.text(r)])).toEqual([
      [false, 'no document matches "refund policy"'],
      [false, 'no document matches "refund policy"'],
    ]);
    expect(searches[2]?.isError).toBe(true);
    expect(s.text(searches[2] as CallToolResult)).toMatch(/^\[loopguard\] stopped \(exact_repeat\): /);

    const late = await s.call('pay', { order: 'A3', amount: 5 });
    expect([late.isError ?? false, s.text(late)]).toEqual([false, 'payment p-4: 5 for order A3']);
    expect(s.charges()).toBe(4);

    const runId = /run (mcp-[0-9a-f-]{36}) /.exec(s.stderr())?.[1];
    expect(runId).toBeDefined();
    const pid = s.upstreamPid();
    expect(alive(pid)).toBe(true);
    await s.client.close();
    await expect.poll(() => alive(pid), { timeout: 5000 }).toBe(false);

    const audit = await cli(['audit', runId as string, '--data-dir', s.dataDir, '--json']);
    const calls = JSON.parse(audit.out).timeline.filter((e: { kind: string }) => e.kind === 'call');
    expect(
      calls.map((c: { tool: string; before: { decision: string; rule: string | null } }) => [
        c.tool,
        c.before.decision,
        c.before.rule,
      ]),
    ).toEqual([
      ['pay', 'execute', null],
      ['pay', 'return_cached_success', expect.any(String)],
      ['pay', 'execute', null],
      ['charge', 'execute', null],
      ['charge', 'return_cached_success', expect.any(String)],
      ['broken', 'execute', null],
      ['refund', 'execute', null],
      ['search', 'execute', null],
      ['search', 'execute', null],
      ['search', 'stop_partial', 'exact_repeat'],
    ]);
    expect(calls[5].result).toMatchObject({ kind: 'PRECONDITION', code: 'tool_error' });
    const stops = (await cli(['stops', '--data-dir', s.dataDir, '--json'])).out.trim().split('\n');
    expect(stops.map((l) => JSON.parse(l)).map((e) => [e.run_id, e.report.terminal_state])).toEqual([
      [runId, 'STOPPED_LOOP_GUARD'],
      [`${runId}-2`, 'PARTIAL'],
    ]);
  }, 60_000);

  it('takes the run id from --run-id and the side effects from the policy before the annotations', async () => {
    const policy = join(mkdtempSync(join(tmpdir(), 'lg-mcp-policy-')), 'policy.json');
    dirs.push(join(policy, '..'));
    // `pay` declared free of side effects: nothing dedupes it, so both identical payments run.
    writeFileSync(policy, JSON.stringify({ tools: { pay: { sideEffect: false } } }));
    const s = await connect(['--run-id', 'desk-1', '--policy', policy]);
    await s.call('pay', { order: 'A1', amount: 30 });
    await s.call('pay', { order: 'A1', amount: 30 });
    expect(s.charges()).toBe(2);
    expect(s.stderr()).toContain('run desk-1 ');
    await s.client.close();
    const audit = JSON.parse((await cli(['audit', 'desk-1', '--data-dir', s.dataDir, '--json'])).out);
    expect(audit.timeline.filter((e: { kind: string }) => e.kind === 'call')).toHaveLength(2);
    // The client went away with the run still live: it ends PARTIAL, the reason kept in its stop report.
    const stop = JSON.parse((await cli(['stops', '--data-dir', s.dataDir, '--json'])).out);
    expect([stop.run_id, stop.report.terminal_state, stop.report.message]).toEqual([
      'desk-1',
      'PARTIAL',
      expect.stringContaining('the MCP client closed the session'),
    ]);
  }, 60_000);

  it('a second session under a fixed --run-id is refused with a clear error', async () => {
    const s = await connect(['--run-id', 'desk-2']);
    await s.call('search', { q: 'first session' });
    await s.client.close();
    await expect.poll(() => s.stderr()).toContain('run desk-2 ended');
    const upstream = join(import.meta.dirname, 'fixtures', 'mcp-upstream.mjs');
    await expect(
      main(
        ['mcp', '--data-dir', s.dataDir, '--run-id', 'desk-2', '--', process.execPath, upstream, s.dir],
        captureIo(),
      ),
    ).rejects.toMatchObject({
      code: 'run_exists',
      message: 'run desk-2 is already in the log: give another --run-id, or leave it out for a generated one',
    });
  }, 60_000);

  it('says what is missing when the upstream command is not given after --', async () => {
    await expect(main(['mcp', '--data-dir', 'unused'], captureIo())).rejects.toMatchObject({
      code: 'usage',
      message: expect.stringContaining('give the upstream MCP server after --'),
    });
    await expect(main(['mcp', 'npx', 'server', '--', 'x'], captureIo())).rejects.toMatchObject({
      code: 'usage',
      message: expect.stringContaining('unexpected npx; the upstream command goes after --'),
    });
  });
});
