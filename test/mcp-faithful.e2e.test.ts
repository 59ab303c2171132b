/**
 * `loopguard mcp` as a faithful MCP server: what is not a tool call passes through, a repeated
 * write is deduplicated only when it is a retry, a stop ends the task and not the session, a
 * cancelled call never starts, a large result does not end the session, and the upstream sees
 * neither loopguard's secrets nor, in the log or on stderr, its own command line's passwords.
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { CallToolResult, JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from './support/cli-run.js';
import { mcpSession } from './support/mcp-session.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function session(opts: Parameters<typeof mcpSession>[0] = {}) {
  const s = await mcpSession(opts);
  cleanups.push(() => rmSync(s.dir, { recursive: true, force: true }));
  cleanups.push(() => s.client.close());
  return s;
}

const runIdOf = (stderr: string) => /run (mcp-[0-9a-f-]{36}) /.exec(stderr)?.[1] as string;

async function calls(runId: string, dataDir: string) {
  const audit = await runCli(['audit', runId, '--data-dir', dataDir, '--json']);
  return JSON.parse(audit.out).timeline.filter((e: { kind: string }) => e.kind === 'call') as Array<{
    tool: string;
    before: { decision: string; rule: string | null };
    result: { kind: string; code: string | null } | null;
  }>;
}

describe('loopguard mcp, a faithful MCP server', () => {
  it('passes resources, templates, prompts, completions and logging through', async () => {
    const s = await session();
    const caps = s.client.getServerCapabilities();
    expect(Object.keys(caps ?? {}).sort()).toEqual([
      'completions',
      'logging',
      'prompts',
      'resources',
      'tools',
    ]);
    expect((await s.client.listResources()).resources.map((r) => r.uri)).toEqual(['note://notes']);
    expect((await s.client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate)).toEqual([
      'note://{name}',
    ]);
    await s.call('write', { text: 'from a tool' });
    const read = await s.client.readResource({ uri: 'note://notes' });
    expect(read.contents).toEqual([{ uri: 'note://notes', mimeType: 'text/plain', text: 'from a tool' }]);
    expect((await s.client.listPrompts()).prompts.map((p) => p.name)).toEqual(['greet']);
    const prompt = await s.client.getPrompt({ name: 'greet', arguments: { who: 'Ada' } });
    expect(prompt.messages).toEqual([{ role: 'user', content: { type: 'text', text: 'Say hello to Ada.' } }]);
    const done = await s.client.complete({
      ref: { type: 'ref/prompt', name: 'greet' },
      argument: { name: 'who', value: 'Al' },
    });
    expect(done.completion.values).toEqual(['Alan']);
    const logs: unknown[] = [];
    s.client.fallbackNotificationHandler = async (n) => {
      if (n.method === 'notifications/message') logs.push(n.params);
    };
    await s.client.setLoggingLevel('debug');
    await expect.poll(() => logs).toEqual([{ level: 'info', data: 'level set to debug' }]);
  }, 60_000);

  it("forwards a tool's progress notifications under the client's own token, before the answer", async () => {
    const s = await session();
    // What reaches the client, in order: the SDK's client itself drops a progress notification
    // that arrives in one read with its answer (typescript-sdk#2580), so this looks at the wire.
    const transport = s.client.transport as NonNullable<typeof s.client.transport>;
    const wire: JSONRPCMessage[] = [];
    const deliver = transport.onmessage;
    transport.onmessage = (m, extra) => {
      wire.push(m);
      deliver?.(m, extra);
    };
    for (const [tool, args, text, progress] of [
      ['slow', { ms: 50 }, 'slept 50 ms', { progress: 1, total: 2, message: 'half way' }],
      // The upstream's progress and answer in one read: the proxy's own SDK client dropped it.
      ['burst', {}, 'burst', { progress: 1, total: 1, message: 'done' }],
    ] as const) {
      wire.length = 0;
      const token = `client-${tool}`;
      const r = (await s.client.callTool({
        name: tool,
        arguments: args,
        _meta: { progressToken: token },
      })) as CallToolResult;
      expect(s.text(r)).toBe(text);
      const kinds = wire.map((m) =>
        'method' in m && m.method === 'notifications/progress' ? m.params : 'result' in m ? 'answer' : m,
      );
      expect(kinds, tool).toEqual([{ progressToken: token, ...progress }, 'answer']);
    }
  }, 60_000);

  it('write A, B, A leaves A: an identical write after another write runs again; a retry does not', async () => {
    const s = await session();
    expect(s.text(await s.call('write', { text: 'hello' }))).toBe('wrote 5 chars');
    // The same write again right away is a retry of it: answered from the ledger.
    expect(s.text(await s.call('write', { text: 'hello' }))).toMatch(
      /^wrote 5 chars\n\[loopguard\] Already done/,
    );
    await s.call('write', { text: 'world' });
    expect(s.notes()).toBe('world');
    // The user removes the file behind the agent's back; the agent writes "hello" again.
    rmSync(join(s.dir, 'notes.txt'));
    const third = await s.call('write', { text: 'hello' });
    expect([third.isError ?? false, s.text(third)]).toEqual([false, 'wrote 5 chars']);
    expect(s.notes()).toBe('hello');
    await s.client.close();
    const runId = runIdOf(s.stderr());
    await expect.poll(() => s.stderr()).toContain(`run ${runId} ended`);
    expect((await calls(runId, s.dataDir)).map((c) => c.before.decision)).toEqual([
      'execute',
      'return_cached_success',
      'execute',
      'execute',
    ]);
  }, 60_000);

  it('a stop ends the task, not the session: the stop is answered once, the next call runs in a new run', async () => {
    const s = await session();
    for (let i = 0; i < 2; i++) await s.call('search', { q: 'refund' });
    const stop = await s.call('search', { q: 'refund' });
    expect(s.text(stop)).toMatch(/^\[loopguard\] stopped \(exact_repeat\)/);
    const next = await s.call('search', { q: 'refund' });
    expect([next.isError ?? false, s.text(next)]).toEqual([false, 'no document matches "refund"']);
    const first = runIdOf(s.stderr());
    expect(s.stderr()).toContain(
      `run ${first} ended STOPPED_LOOP_GUARD; the session goes on in run ${first}-2`,
    );
    await s.client.close();
    await expect.poll(() => s.stderr()).toContain(`run ${first}-2 ended PARTIAL`);
    expect((await calls(first, s.dataDir)).map((c) => c.before.decision)).toEqual([
      'execute',
      'execute',
      'stop_partial',
    ]);
    expect((await calls(`${first}-2`, s.dataDir)).map((c) => c.before.decision)).toEqual(['execute']);
  }, 60_000);

  it('a call the client cancelled never starts; the one in flight is aborted and recorded cancelled', async () => {
    const s = await session();
    // One call runs for 1 s; four more wait their turn behind it, and the client gives up on them at 200 ms.
    const running = s.call('slow', { ms: 1000 });
    const cancelled = AbortSignal.timeout(200);
    const queued = [1, 2, 3, 4].map((ms) =>
      s.client.callTool({ name: 'slow', arguments: { ms } }, undefined, { signal: cancelled }).then(
        () => 'answered',
        (e: Error) => e.message,
      ),
    );
    expect(await Promise.all(queued)).toEqual(Array(4).fill(expect.stringMatching(/abort/i)));
    expect(s.text(await running)).toBe('slept 1000 ms');
    // One in flight when the client gives up: aborted, recorded as cancelled.
    const inFlight = s.client.callTool({ name: 'slow', arguments: { ms: 5000 } }, undefined, {
      signal: AbortSignal.timeout(300),
    });
    await expect(inFlight).rejects.toThrow(/abort/i);
    // The queued ones never reached the upstream, nor the log; a later call runs as usual.
    expect(s.text(await s.call('search', { q: 'after' }))).toBe('no document matches "after"');
    expect(readFileSync(join(s.dir, 'started.log'), 'utf8')).toBe('1000\n5000\n');
    await s.client.close();
    const runId = runIdOf(s.stderr());
    await expect.poll(() => s.stderr()).toContain(`run ${runId} ended`);
    const recorded = await calls(runId, s.dataDir);
    expect(recorded.map((c) => [c.tool, c.before.decision, c.result?.code ?? null])).toEqual([
      ['slow', 'execute', null],
      ['slow', 'execute', 'cancelled'],
      ['search', 'execute', null],
    ]);
  }, 60_000);

  it('passes a 300 KB result to the client whole and stores it truncated with its hash', async () => {
    const s = await session();
    const r = await s.call('big', { kb: 300 });
    expect([r.isError ?? false, s.text(r).length]).toEqual([false, 300 * 1024]);
    expect(s.text(await s.call('search', { q: 'still on' }))).toBe('no document matches "still on"');
    await s.client.close();
    const runId = runIdOf(s.stderr());
    await expect.poll(() => s.stderr()).toContain(`run ${runId} ended PARTIAL`);
    expect((await calls(runId, s.dataDir)).map((c) => [c.tool, c.result?.kind])).toEqual([
      ['big', 'SUCCESS'],
      ['search', 'SUCCESS'],
    ]);
  }, 60_000);

  it('gives the upstream a minimal environment plus --env names, and redacts its command line', async () => {
    const s = await session({
      env: { LOOPGUARD_SECRET_KEY: 'k'.repeat(40), SHOP_REGION: 'eu', OTHER_THING: 'x' },
      flags: ['--env', 'SHOP_REGION'],
      upstreamArgs: ['postgres://app:hunter2secret@db.internal/shop'],
    });
    const names = s.text(await s.call('env')).split(' ');
    expect(names).toContain('SHOP_REGION');
    expect(names).toContain('PATH');
    expect(names).not.toContain('LOOPGUARD_SECRET_KEY');
    expect(names).not.toContain('OTHER_THING');
    expect(s.stderr()).toContain('postgres://');
    expect(s.stderr()).not.toContain('hunter2secret');
    await s.client.close();
    const runId = runIdOf(s.stderr());
    await expect.poll(() => s.stderr()).toContain(`run ${runId} ended`);
    // Not in any byte of the log: the run's start records the command line redacted.
    const files = readdirSync(s.dataDir, { recursive: true, withFileTypes: true }).filter((f) => f.isFile());
    const bytes = files.map((f) => readFileSync(join(f.parentPath, f.name)).toString('latin1')).join('');
    expect(bytes).toContain('postgres://');
    expect(bytes).not.toContain('hunter2secret');
  }, 60_000);

  it('an upstream that exits ends the session with one clear error', async () => {
    const s = await session();
    expect(s.text(await s.call('search', { q: 'first' }))).toBe('no document matches "first"');
    const closed = new Promise<void>((resolve) => {
      s.client.onclose = resolve;
    });
    process.kill(s.upstreamPid(), 'SIGKILL');
    await closed;
    const runId = runIdOf(s.stderr());
    await expect.poll(() => s.stderr()).toContain('upstream_exited: the upstream MCP server exited');
    expect(s.stderr()).not.toMatch(/run_ended|did not accept|at .*\.ts:\d+/);
    const stop = JSON.parse((await runCli(['stops', '--data-dir', s.dataDir, '--json'])).out);
    expect([stop.run_id, stop.report.terminal_state, stop.report.message]).toEqual([
      runId,
      'PARTIAL',
      expect.stringContaining('the upstream MCP server exited'),
    ]);
  }, 60_000);
});
