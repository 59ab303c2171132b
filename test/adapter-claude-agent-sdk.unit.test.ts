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
