import { afterEach, describe, expect, it } from 'vitest';
import { type ClaudeHookOutput, claudeAgentGuard } from '../src/adapters/claude-agent-sdk.js';
import { type LoopingShop, openLoopingShop } from './support/looping-shop.js';

/**
 * The guard's hooks called with the inputs the Claude Code binary sends (seen in the e2e test,
 * which runs them for real): the cases that scene does not reach.
 */
let shop: LoopingShop;
afterEach(() => shop.cleanup());

const signal = new AbortController().signal;
const base = { session_id: 's', transcript_path: '/t', cwd: '/w' };
const toolEvent = (event: string, id: string, tool: string, input: object, extra: object = {}) => ({
  ...base,
  hook_event_name: event,
  tool_name: tool,
  tool_input: input,
  tool_use_id: id,
  ...extra,
});

describe('loopguard/claude-agent-sdk hooks', () => {
  it('never answers allow or ask; a call the SDK denied after the guard allowed it is settled at the batch end', async () => {
    shop = await openLoopingShop('claude-hooks-batch');
    const { hooks } = claudeAgentGuard(shop.run);
    const [pre] = hooks.PreToolUse[0]?.hooks ?? [];
    const [batch] = hooks.PostToolBatch[0]?.hooks ?? [];
    const [post] = hooks.PostToolUse[0]?.hooks ?? [];
    if (pre === undefined || batch === undefined || post === undefined) throw new Error('hooks missing');
    const outs: ClaudeHookOutput[] = [];
    outs.push(
      await pre(toolEvent('PreToolUse', 'w1', 'Write', { file_path: '/w/a', content: 'x' }), 'w1', {
        signal,
      }),
    );
    // No PostToolUse comes (the SDK denied it); the batch ends and the run's turn is free again.
    const batchEnd = { ...base, hook_event_name: 'PostToolBatch', tool_calls: [{ tool_use_id: 'w1' }] };
    outs.push(await batch(batchEnd, undefined, { signal }));
    outs.push(await pre(toolEvent('PreToolUse', 'b1', 'Bash', { command: 'ls' }), 'b1', { signal }));
    const ran = toolEvent('PostToolUse', 'b1', 'Bash', { command: 'ls' }, { tool_response: 'a' });
    outs.push(await post(ran, 'b1', { signal }));
    // Nothing the guard says is an allow or an ask: the SDK's permissions decide those.
    expect(outs).toEqual([{}, {}, {}, {}]);
    const calls = await shop.auditCalls();
    expect(calls.map((c) => `${c.tool}:${c.result?.kind}:${c.result?.code}`)).toEqual([
      'Write:PRECONDITION:not_run',
      'Bash:SUCCESS:null',
    ]);
  });

  it('a sub-agent launch is not held: the sub-agent’s own calls are decided while it runs', async () => {
    shop = await openLoopingShop('claude-hooks-task');
    const { hooks } = claudeAgentGuard(shop.run);
    const [pre] = hooks.PreToolUse[0]?.hooks ?? [];
    const [post] = hooks.PostToolUse[0]?.hooks ?? [];
    if (pre === undefined || post === undefined) throw new Error('hooks missing');
    expect(await pre(toolEvent('PreToolUse', 't1', 'Task', { prompt: 'look' }), 't1', { signal })).toEqual(
      {},
    );
    // Decided at once, not after the step timeout the held launch would have taken.
    expect(await pre(toolEvent('PreToolUse', 'r1', 'Read', { file_path: '/w/a' }), 'r1', { signal })).toEqual(
      {},
    );
    await post(toolEvent('PostToolUse', 'r1', 'Read', { file_path: '/w/a' }, { tool_response: 'a' }), 'r1', {
      signal,
    });
    await post(toolEvent('PostToolUse', 't1', 'Task', { prompt: 'look' }, { tool_response: 'done' }), 't1', {
      signal,
    });
    const calls = await shop.auditCalls();
    expect(calls.map((c) => `${c.tool}:${c.result?.kind}`)).toEqual(['Read:SUCCESS']);
  });

  it('an in-process MCP tool is guarded by its handler without the hooks: a retried charge answered from the ledger', async () => {
    shop = await openLoopingShop('claude-mcp-alone');
    const guard = claudeAgentGuard(shop.run, {
      // No sideEffects, no policy: the key alone makes it a side effect.
      operationKey: (tool, args) =>
        tool === 'mcp__pay__charge' ? `acme:charge:${String(args.order)}` : undefined,
    });
    const charge = {
      name: 'charge',
      handler: async (args: { order: string; amount: number }, _extra: unknown) => ({
        content: [{ type: 'text', text: JSON.stringify(shop.chargeCard(args)) }],
      }),
    };
    const server = guard.mcpServer({ name: 'pay', tools: [charge] });
    const [tool] = server.tools;
    if (tool === undefined) throw new Error('no tool');
    const first = await tool.handler(
      { order: 'A1', amount: 30 },
      { _meta: { 'claudecode/toolUseId': 'c1' } },
    );
    const again = await tool.handler(
      { order: 'A1', amount: 30 },
      { _meta: { 'claudecode/toolUseId': 'c2' } },
    );
    expect(shop.charges()).toBe(1);
    expect(first).toEqual({ content: [{ type: 'text', text: '{"payment_id":"p-1","amount":30}' }] });
    expect(again).toEqual({
      content: [
        { type: 'text', text: '{"payment_id":"p-1","amount":30}' },
        {
          type: 'text',
          text: expect.stringMatching(/^\[loopguard\] Already done: operation acme:charge:A1/),
        },
      ],
    });
  });
});

/** The guard's hook for one event, as the SDK calls it. */
const hookOf = (g: ReturnType<typeof claudeAgentGuard>, event: keyof typeof g.hooks) => {
  const [h] = g.hooks[event][0]?.hooks ?? [];
  if (h === undefined) throw new Error(`no ${event} hook`);
  return (input: object, id?: string) => h(input as { hook_event_name: string }, id, { signal });
};
/** A charge made with Bash, keyed by its order however the command spells it. */
const bashCharge = {
  operationKey: (tool: string, args: Record<string, unknown>) => {
    const m = tool === 'Bash' ? /charge\.sh\s+(?:--order\s+)?(\w+)/.exec(String(args.command)) : null;
    return m ? `acme:charge:${m[1]}` : undefined;
  },
};
const denial = (o: ClaudeHookOutput) =>
  o.hookSpecificOutput?.hookEventName === 'PreToolUse' ? o.hookSpecificOutput.permissionDecisionReason : null;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('loopguard/claude-agent-sdk: calls the SDK runs in parallel', () => {
  it('a charge approved and running in one sub-agent is not settled when another sub-agent calls: the second waits for it and is answered as done', async () => {
    shop = await openLoopingShop('claude-par-subagents');
    const g = claudeAgentGuard(shop.run, bashCharge);
    const [pre, asked, post] = [
      hookOf(g, 'PreToolUse'),
      hookOf(g, 'PermissionRequest'),
      hookOf(g, 'PostToolUse'),
    ];
    const a = { command: './charge.sh A1' };
    const b = { command: './charge.sh --order A1' };
    expect(await pre(toolEvent('PreToolUse', 'a1', 'Bash', a, { agent_id: 'A' }), 'a1')).toEqual({});
    // PermissionRequest's input has no tool_use_id: the SDK passes it as the callback's own.
    await asked(
      { ...base, hook_event_name: 'PermissionRequest', tool_name: 'Bash', tool_input: a, agent_id: 'A' },
      'a1',
    );
    // Approved: a1 runs. Sub-agent B's PreToolUse comes meanwhile and waits for a1's result.
    let second: ClaudeHookOutput | undefined;
    const b1 = pre(toolEvent('PreToolUse', 'b1', 'Bash', b, { agent_id: 'B' }), 'b1').then((o) => {
      second = o;
      return o;
    });
    await pause(100);
    expect(second).toBeUndefined();
    const ran = { agent_id: 'A', tool_response: { stdout: 'charged p-1' } };
    expect(await post(toolEvent('PostToolUse', 'a1', 'Bash', a, ran), 'a1')).toEqual({});
    expect(denial(await b1)).toMatch(/Already done: operation acme:charge:A1/);
    const calls = await shop.auditCalls();
    expect(calls.map((c) => `${c.tool}:${c.result?.kind ?? '-'}:${c.result?.code ?? '-'}`)).toEqual([
      'Bash:SUCCESS:-',
      'Bash:-:-',
    ]);
  });

  it('a call of the same batch meets one before the permission flow: it is denied at once (no deadlock), and the batch end settles the other', async () => {
    shop = await openLoopingShop('claude-par-batch');
    const g = claudeAgentGuard(shop.run, bashCharge);
    const [pre, asked, batch, post] = [
      hookOf(g, 'PreToolUse'),
      hookOf(g, 'PermissionRequest'),
      hookOf(g, 'PostToolBatch'),
      hookOf(g, 'PostToolUse'),
    ];
    const a = { command: './charge.sh A1' };
    const r = { file_path: '/w/notes' };
    // Both PreToolUse hooks come at once, as for concurrency-safe tool uses of one message.
    const a1 = pre(toolEvent('PreToolUse', 'a1', 'Bash', a), 'a1');
    const r1 = pre(toolEvent('PreToolUse', 'r1', 'Read', r), 'r1');
    expect(await a1).toEqual({});
    await asked({ ...base, hook_event_name: 'PermissionRequest', tool_name: 'Bash', tool_input: a }, 'a1');
    // a1 may be denied there, which only the batch's end would say: r1 does not wait for it.
    const out = await Promise.race([r1, pause(3000).then(() => 'waited')]);
    expect(out).not.toBe('waited');
    expect(denial(out as ClaudeHookOutput)).toMatch(
      /^\[loopguard\] not decided: Bash call a1 waits for the SDK's permission/,
    );
    await batch({
      ...base,
      hook_event_name: 'PostToolBatch',
      tool_calls: [{ tool_use_id: 'a1' }, { tool_use_id: 'r1' }],
    });
    // Asked for again, r1 is decided and runs.
    expect(await pre(toolEvent('PreToolUse', 'r2', 'Read', r), 'r2')).toEqual({});
    await post(toolEvent('PostToolUse', 'r2', 'Read', r, { tool_response: 'notes' }), 'r2');
    const calls = await shop.auditCalls();
    expect(calls.map((c) => `${c.tool}:${c.result?.kind ?? '-'}:${c.result?.code ?? '-'}`)).toEqual([
      'Bash:PRECONDITION:not_run',
      'Read:SUCCESS:-',
    ]);
  }, 15_000);

  it('a PostToolUse for a call already settled as not run is not decided anew', async () => {
    shop = await openLoopingShop('claude-late-post');
    const g = claudeAgentGuard(shop.run, bashCharge);
    const [pre, denied, post] = [
      hookOf(g, 'PreToolUse'),
      hookOf(g, 'PermissionDenied'),
      hookOf(g, 'PostToolUse'),
    ];
    const a = { command: './charge.sh A1' };
    expect(await pre(toolEvent('PreToolUse', 'a1', 'Bash', a), 'a1')).toEqual({});
    await denied(toolEvent('PermissionDenied', 'a1', 'Bash', a, { reason: 'auto mode says no' }), 'a1');
    expect(await post(toolEvent('PostToolUse', 'a1', 'Bash', a, { tool_response: 'charged' }), 'a1')).toEqual(
      {},
    );
    const calls = await shop.auditCalls();
    expect(calls.map((c) => `${c.tool}:${c.result?.kind ?? '-'}:${c.result?.code ?? '-'}`)).toEqual([
      'Bash:PRECONDITION:not_run',
    ]);
  });

  it("a Write the SDK runs alone, held when its agent's next call comes, was not run: settled, and the next call decided", async () => {
    shop = await openLoopingShop('claude-run-alone');
    const g = claudeAgentGuard(shop.run);
    const [pre, post] = [hookOf(g, 'PreToolUse'), hookOf(g, 'PostToolUse')];
    const w = { file_path: '/w/a', content: 'x' };
    expect(await pre(toolEvent('PreToolUse', 'w1', 'Write', w), 'w1')).toEqual({});
    // No PermissionRequest, no PostToolUse (a deny rule or another hook refused it).
    expect(await pre(toolEvent('PreToolUse', 'b1', 'Bash', { command: 'ls' }), 'b1')).toEqual({});
    await post(toolEvent('PostToolUse', 'b1', 'Bash', { command: 'ls' }, { tool_response: 'a' }), 'b1');
    const calls = await shop.auditCalls();
    expect(calls.map((c) => `${c.tool}:${c.result?.kind ?? '-'}:${c.result?.code ?? '-'}`)).toEqual([
      'Write:PRECONDITION:not_run',
      'Bash:SUCCESS:-',
    ]);
  });
});

describe("loopguard/claude-agent-sdk: the permission flow's updatedInput", () => {
  it('an in-process tool run with other input than decided on is decided anew: B2 charged once, A1 never answered as done', async () => {
    shop = await openLoopingShop('claude-updated-mcp');
    const g = claudeAgentGuard(shop.run, {
      operationKey: (name, args) =>
        name === 'mcp__shop__charge_card' ? `acme:charge:${String(args.order)}` : undefined,
    });
    const charged: string[] = [];
    const charge = {
      name: 'charge_card',
      handler: async (args: { order: string; amount: number }, _extra: unknown) => {
        charged.push(args.order);
        return { content: [{ type: 'text', text: JSON.stringify(shop.chargeCard(args)) }] };
      },
    };
    const [tool] = g.mcpServer({ name: 'shop', tools: [charge] }).tools;
    if (tool === undefined) throw new Error('no tool');
    const pre = hookOf(g, 'PreToolUse');
    const step = async (id: string, asked: object, ranWith: { order: string; amount: number }) => {
      const d = await pre(toolEvent('PreToolUse', id, 'mcp__shop__charge_card', asked), id);
      if (d.hookSpecificOutput !== undefined) return denial(d);
      const reply = (await tool.handler(ranWith, { _meta: { 'claudecode/toolUseId': id } })) as {
        content: { text: string }[];
      };
      return reply.content.map((c) => c.text).join(' | ');
    };
    // canUseTool allowed t1 with updatedInput: the order B2 instead of A1.
    expect(await step('t1', { order: 'A1', amount: 30 }, { order: 'B2', amount: 30 })).toBe(
      '{"payment_id":"p-1","amount":30}',
    );
    expect(await step('t2', { order: 'B2', amount: 30 }, { order: 'B2', amount: 30 })).toMatch(
      /Already done: operation acme:charge:B2/,
    );
    expect(await step('t3', { order: 'A1', amount: 30 }, { order: 'A1', amount: 30 })).not.toMatch(
      /Already done: operation acme:charge:A1/,
    );
    expect(charged).toEqual(['B2']);
  });

  it('a built-in run with other input than decided on is recorded under the key it ran with, the decided one as not run', async () => {
    shop = await openLoopingShop('claude-updated-bash');
    const g = claudeAgentGuard(shop.run, bashCharge);
    const [pre, post] = [hookOf(g, 'PreToolUse'), hookOf(g, 'PostToolUse')];
    expect(await pre(toolEvent('PreToolUse', 'a1', 'Bash', { command: './charge.sh A1' }), 'a1')).toEqual({});
    // PostToolUse has the input the tool ran with.
    const ran = { tool_response: { stdout: 'charged p-1' } };
    await post(toolEvent('PostToolUse', 'a1', 'Bash', { command: './charge.sh B2' }, ran), 'a1');
    expect(
      denial(await pre(toolEvent('PreToolUse', 'b1', 'Bash', { command: './charge.sh B2' }), 'b1')),
    ).toMatch(/Already done: operation acme:charge:B2/);
    // A1 did not run: it is free to run.
    const c = { command: './charge.sh --order A1' };
    expect(await pre(toolEvent('PreToolUse', 'c1', 'Bash', c), 'c1')).toEqual({});
    await post(toolEvent('PostToolUse', 'c1', 'Bash', c, { tool_response: { stdout: 'charged p-2' } }), 'c1');
    const calls = await shop.auditCalls();
    expect(calls.map((x) => `${x.tool}:${x.result?.kind ?? '-'}:${x.result?.code ?? '-'}`)).toEqual([
      'Bash:PRECONDITION:not_run',
      'Bash:SUCCESS:-',
      'Bash:-:-',
      'Bash:SUCCESS:-',
    ]);
  });
});

describe('loopguard/claude-agent-sdk mcpServer and the abort', () => {
  it("the SDK's extra.signal aborted at 200 ms reaches the tool at once, and the call is recorded as not succeeded", async () => {
    shop = await openLoopingShop('claude-mcp-abort');
    const guard = claudeAgentGuard(shop.run);
    const started = Date.now();
    let abortedAfterMs: number | null = null;
    const slowSearch = {
      name: 'slow_search',
      handler: (_args: { q: string }, extra: unknown) => {
        const { signal } = extra as { signal: AbortSignal };
        return new Promise<never>((_resolve, reject) => {
          // The caller aborts 200 ms after the tool started: an abort before it would prove nothing.
          setTimeout(() => caller.abort(), 200);
          const done = setTimeout(() => reject(new Error('ran its full 3 s')), 3000);
          signal.addEventListener('abort', () => {
            abortedAfterMs = Date.now() - started;
            clearTimeout(done);
            reject(signal.reason);
          });
        });
      },
    };
    const caller = new AbortController();
    const [tool] = guard.mcpServer({ name: 'docs', tools: [slowSearch] }).tools;
    if (tool === undefined) throw new Error('no tool');

    // The extra the MCP server hands a tool callback: the request's signal (aborted when the SDK
    // cancels the request or closes the server) and the tool use id in _meta.
    const reply = await tool.handler(
      { q: 'refund policy' },
      { signal: caller.signal, _meta: { 'claudecode/toolUseId': 's1' } },
    );

    expect(abortedAfterMs).not.toBeNull();
    expect(abortedAfterMs).toBeLessThan(1000);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(reply).toMatchObject({ isError: true });
    const calls = await shop.auditCalls();
    expect(calls.map((c) => `${c.tool}:${c.result?.kind}`)).toEqual(['mcp__docs__slow_search:RETRYABLE']);
  });
});
