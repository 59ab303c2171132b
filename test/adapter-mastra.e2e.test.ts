import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from '@mastra/core/agent';
import { Mastra } from '@mastra/core/mastra';
import { InMemoryStore } from '@mastra/core/storage';
import { MastraLanguageModelV2Mock } from '@mastra/core/test-utils/llm-mock';
import { createTool } from '@mastra/core/tools';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { GuardedCallError, guardStopped, wrapTools } from '../src/adapters/mastra.js';
import { createGuard } from '../src/runtime/index.js';
import { CHARGE, type LoopingShop, openLoopingShop, SEARCH } from './support/looping-shop.js';

type Step = readonly (readonly [string, object])[];

/** Mastra's own mock model, asking for the calls of its script, one entry per step; an empty step answers in text. */
function scripted(script: readonly Step[]): { model: MastraLanguageModelV2Mock; prompts: string[] } {
  const prompts: string[] = [];
  const model = new MastraLanguageModelV2Mock({
    doGenerate: async (options) => {
      prompts.push(JSON.stringify(options.prompt));
      const n = prompts.length;
      const calls = script[n - 1] ?? [];
      return {
        content:
          calls.length === 0
            ? [{ type: 'text', text: 'done' }]
            : calls.map(([toolName, input], i) => ({
                type: 'tool-call' as const,
                toolCallId: `call-${n}-${i}`,
                toolName,
                input: JSON.stringify(input),
              })),
        finishReason: calls.length === 0 ? 'stop' : 'tool-calls',
        usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 },
        warnings: [],
      };
    },
  });
  return { model, prompts };
}

/** Pays for A1 twice, then asks for the same search on every step it gets. */
const LOOP: readonly Step[] = Array.from({ length: 40 }, (_, i) =>
  i < 2 ? [['charge_card', CHARGE]] : [['search_docs', SEARCH]],
);

const shopTools = (s: LoopingShop, charge: { requireApproval?: boolean } = {}) => ({
  search_docs: createTool({
    id: 'search_docs',
    description: 'Search the help center',
    inputSchema: z.object({ q: z.string() }),
    execute: async (args) => s.searchDocs(args),
  }),
  charge_card: createTool({
    id: 'charge_card',
    description: 'Charge the customer card for an order',
    inputSchema: z.object({ order: z.string(), amount: z.number() }),
    outputSchema: z.object({ payment_id: z.string(), amount: z.number() }),
    execute: async (args) => s.chargeCard(args),
    ...charge,
  }),
});

/** What the model read as the result of each tool call, in order. */
const toolOutputs = (prompt: string | undefined) =>
  (JSON.parse(prompt ?? '[]') as { role: string; content: unknown }[])
    .filter((m) => m.role === 'tool')
    .flatMap((m) => m.content as { toolName: string; output: { type: string; value: unknown } }[])
    .map((p) => [p.toolName, p.output.type, p.output.value] as const);

let shop: LoopingShop;
afterEach(() => shop.cleanup());

describe('loopguard/mastra with a real Mastra Agent', () => {
  it('wrapTools and guardStopped: charged once, the repeat refused as a tool error the model reads, the loop ends', async () => {
    shop = await openLoopingShop('mastra-loop');
    const { model, prompts } = scripted(LOOP);
    const agent = new Agent({
      id: 'shop',
      name: 'shop',
      instructions: 'Refund orders',
      model,
      tools: wrapTools(shop.run, shopTools(shop), shop.guardOptions),
    });

    const result = await agent.generate('Refund order A1', {
      maxSteps: 20,
      stopWhen: guardStopped(shop.run),
    });

    expect(shop.charges()).toBe(1);
    expect(shop.searches()).toBe(2);
    // Five tool steps, then the model's step with the stop before it; its search was refused and the loop ended.
    expect(prompts).toHaveLength(6);
    expect(result.steps).toHaveLength(6);
    const read = toolOutputs(prompts[5]);
    // The second charge is answered from the ledger in its declared shape, not a validation error.
    expect(read[1]).toEqual(['charge_card', 'json', { payment_id: 'p-1', amount: 30 }]);
    expect(read[4]?.slice(0, 2)).toEqual(['search_docs', 'error-text']);
    expect(String(read[4]?.[2])).toMatch(/^\[loopguard\] stopped \(exact_repeat\)/);
    expect(prompts.join('\n')).not.toContain('validation failed');
    const calls = await shop.auditCalls();
    expect(calls.map((c) => `${c.tool}:${c.before?.decision}`)).toEqual([
      'charge_card:execute',
      'charge_card:return_cached_success',
      'search_docs:execute',
      'search_docs:execute',
      'search_docs:stop_partial',
      // The model's step after the stop asked again: refused, and the loop ended there.
      'search_docs:refuse',
    ]);
  });

  it('without guardStopped the same agent asks on until maxSteps (why guardStopped exists); every late call is refused', async () => {
    shop = await openLoopingShop('mastra-no-stop');
    const { model, prompts } = scripted(LOOP);
    const agent = new Agent({
      id: 'shop',
      name: 'shop',
      instructions: 'Refund orders',
      model,
      tools: wrapTools(shop.run, shopTools(shop), shop.guardOptions),
    });
    await agent.generate('Refund order A1', { maxSteps: 12 });
    expect(prompts).toHaveLength(12);
    expect([shop.charges(), shop.searches()]).toEqual([1, 2]);
  });

  it('an operationKey alone gates the call by the ledger: no sideEffects option, no policy, one charge', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'lg-mastra-key-'));
    const guard = await createGuard({ dataDir });
    try {
      const run = await guard.startRun({ runId: 'mastra-key', tenant: 'acme' });
      let charges = 0;
      const { model } = scripted([[['charge_card', CHARGE]], [['charge_card', CHARGE]], []]);
      const agent = new Agent({
        id: 'shop',
        name: 'shop',
        instructions: 'Refund orders',
        model,
        tools: wrapTools(
          run,
          {
            charge_card: createTool({
              id: 'charge_card',
              description: 'Charge the customer card for an order',
              inputSchema: z.object({ order: z.string(), amount: z.number() }),
              execute: async ({ amount }) => ({ payment_id: `p-${++charges}`, amount }),
            }),
          },
          {
            operationKey: (tool, args) =>
              tool === 'charge_card' ? `acme:charge:${String(args.order)}` : undefined,
          },
        ),
      });
      await agent.generate('Refund order A1', { maxSteps: 20, stopWhen: guardStopped(run) });
      expect(charges).toBe(1);
    } finally {
      await guard.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it("a tool's requireApproval still asks the human; the guard judges the call only once it is approved", async () => {
    shop = await openLoopingShop('mastra-approval');
    const { model } = scripted([[['charge_card', CHARGE]], []]);
    const agent = new Agent({
      id: 'shop',
      name: 'shop',
      instructions: 'Refund orders',
      model,
      tools: wrapTools(shop.run, shopTools(shop, { requireApproval: true }), shop.guardOptions),
    });
    // Mastra keeps a suspended run in its storage, to resume it on the approval.
    new Mastra({ agents: { agent }, storage: new InMemoryStore(), logger: false });
    const options = { maxSteps: 20, stopWhen: guardStopped(shop.run) };

    const first = await agent.generate('Refund order A1', options);
    expect(first.finishReason).toBe('suspended');
    expect(first.suspendPayload).toMatchObject({ toolName: 'charge_card', args: CHARGE });
    expect(shop.charges()).toBe(0);

    const toolCallId = (first.suspendPayload as { toolCallId: string }).toolCallId;
    const second = await agent.approveToolCallGenerate({
      ...options,
      runId: String(first.runId),
      toolCallId,
    });
    expect(shop.charges()).toBe(1);
    expect(second.text).toBe('done');
    const calls = await shop.auditCalls();
    expect(calls.map((c) => `${c.tool}:${c.before?.decision}`)).toEqual(['charge_card:execute']);
  });

  it('a human who declines keeps the card uncharged and the guard records nothing', async () => {
    shop = await openLoopingShop('mastra-decline');
    const { model } = scripted([[['charge_card', CHARGE]], []]);
    const agent = new Agent({
      id: 'shop',
      name: 'shop',
      instructions: 'Refund orders',
      model,
      tools: wrapTools(shop.run, shopTools(shop, { requireApproval: true }), shop.guardOptions),
    });
    new Mastra({ agents: { agent }, storage: new InMemoryStore(), logger: false });
    const first = await agent.generate('Refund order A1', { maxSteps: 20 });
    const toolCallId = (first.suspendPayload as { toolCallId: string }).toolCallId;
    await agent.declineToolCallGenerate({ maxSteps: 20, runId: String(first.runId), toolCallId });
    expect(shop.charges()).toBe(0);
    expect(await shop.auditCalls()).toEqual([]);
  });

  it('the caller aborting at 200 ms reaches the tool at once, not at its 20 s end', async () => {
    shop = await openLoopingShop('mastra-abort');
    const { model, prompts } = scripted([[['slow_search', SEARCH]], []]);
    let abortedAfterMs: number | null = null;
    const caller = new AbortController();
    const started = Date.now();
    const agent = new Agent({
      id: 'shop',
      name: 'shop',
      instructions: 'Refund orders',
      model,
      tools: wrapTools(shop.run, {
        slow_search: createTool({
          id: 'slow_search',
          description: 'A search that takes 20 s unless aborted',
          inputSchema: z.object({ q: z.string() }),
          execute: (_args, { abortSignal }) =>
            new Promise<string>((resolve, reject) => {
              // The caller aborts 200 ms after the tool started: an abort before it would prove nothing.
              setTimeout(() => caller.abort(), 200);
              const done = setTimeout(() => resolve('late'), 20_000);
              abortSignal?.addEventListener('abort', () => {
                abortedAfterMs = Date.now() - started;
                clearTimeout(done);
                reject(abortSignal.reason);
              });
            }),
        }),
      }),
    });

    await agent
      .generate('Refund order A1', { maxSteps: 5, abortSignal: caller.signal })
      .catch(() => undefined);
    expect(abortedAfterMs).not.toBeNull();
    expect(abortedAfterMs).toBeLessThan(10_000);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(prompts.join('\n')).not.toContain('late');
    const calls = await shop.auditCalls();
    expect(calls.map((c) => c.result?.kind)).toEqual(['RETRYABLE']);
  });

  it("Mastra's own output validation error is a failed call to the guard, and the model reads it as a tool error", async () => {
    shop = await openLoopingShop('mastra-invalid-output');
    const { model, prompts } = scripted([[['lookup', { order: 'A1' }]], []]);
    const agent = new Agent({
      id: 'shop',
      name: 'shop',
      instructions: 'Refund orders',
      model,
      tools: wrapTools(shop.run, {
        lookup: createTool({
          id: 'lookup',
          description: 'Look an order up',
          inputSchema: z.object({ order: z.string() }),
          outputSchema: z.object({ total: z.number() }),
          execute: async () => ({ total: 'thirty' }) as never,
        }),
      }),
    });
    await agent.generate('Refund order A1', { maxSteps: 5, stopWhen: guardStopped(shop.run) });
    const [read] = toolOutputs(prompts[1]);
    expect(read?.slice(0, 2)).toEqual(['lookup', 'error-text']);
    expect(String(read?.[2])).toContain('Tool output validation failed for lookup');
    const calls = await shop.auditCalls();
    expect(calls.map((c) => c.result?.kind)).not.toContain('SUCCESS');
    expect(calls).toHaveLength(1);
  });

  it('a refused call throws GuardedCallError with the guard result, outside an agent too', async () => {
    shop = await openLoopingShop('mastra-direct');
    const tools = wrapTools(shop.run, shopTools(shop), shop.guardOptions);
    const search = tools.search_docs.execute;
    if (search === undefined) throw new Error('search_docs lost its execute');
    const ctx = {} as Parameters<typeof search>[1];
    await search(SEARCH, ctx);
    await search(SEARCH, ctx);
    const third = await search(SEARCH, ctx).catch((e: unknown) => e);
    expect(third).toBeInstanceOf(GuardedCallError);
    expect((third as GuardedCallError).result.status).toBe('stopped');
    expect(shop.searches()).toBe(2);
  });
});
