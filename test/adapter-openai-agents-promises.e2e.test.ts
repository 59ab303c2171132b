import { Agent, Runner, setTracingDisabled, tool } from '@openai/agents';
import { functionCall, modelResponder, ScriptedModel } from '@openai/agents/testing';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { agentsGuard } from '../src/adapters/openai-agents.js';
import { CHARGE, type LoopingShop, openLoopingShop, SEARCH } from './support/looping-shop.js';

/** A scripted model that asks for `first` once, then the same search on every turn it gets. */
const model = (first: ReturnType<typeof functionCall>, turns = 20) =>
  new ScriptedModel(
    Array.from({ length: turns }, (_, i) =>
      modelResponder(() => [i === 0 ? first : functionCall('search_docs', SEARCH, { callId: `call-${i}` })]),
    ),
  );

let shop: LoopingShop;
beforeAll(() => setTracingDisabled(true));
afterEach(() => shop.cleanup());

const searchTool = (guard: ReturnType<typeof agentsGuard>) =>
  tool({
    name: 'search_docs',
    description: 'Search the help center',
    parameters: z.object({ q: z.string() }),
    inputGuardrails: [guard.inputGuardrail],
    execute: guard.execute('search_docs', (args: { q: string }) => shop.searchDocs(args)),
  });

describe('loopguard/openai-agents keeps the framework promises', () => {
  it('a tool with needsApproval interrupts for the human; the card is charged only after the approval', async () => {
    shop = await openLoopingShop('agents-human-approval');
    const guard = agentsGuard(shop.run, shop.guardOptions);
    const agent = new Agent({
      name: 'refunds',
      model: model(functionCall('charge_card', CHARGE, { callId: 'call-0' }), 2),
      toolUseBehavior: 'stop_on_first_tool',
      tools: [
        tool({
          name: 'charge_card',
          description: 'Charge the customer card for an order',
          parameters: z.object({ order: z.string(), amount: z.number() }),
          needsApproval: true,
          inputGuardrails: [guard.inputGuardrail],
          execute: guard.execute('charge_card', (args: { order: string; amount: number }) =>
            JSON.stringify(shop.chargeCard(args)),
          ),
        }),
      ],
    });
    const runner = new Runner({ tracingDisabled: true });

    const first = await runner.run(agent, 'Refund order A1');
    expect(first.interruptions).toHaveLength(1);
    expect(shop.charges()).toBe(0);

    const interruption = first.interruptions[0];
    if (interruption === undefined) throw new Error('no interruption');
    first.state.approve(interruption);
    const second = await runner.run(agent, first.state);
    expect(shop.charges()).toBe(1);
    expect(second.finalOutput).toBe('{"payment_id":"p-1","amount":30}');
    const calls = await shop.auditCalls();
    expect(calls.map((c) => `${c.tool}:${c.before?.decision}`)).toEqual(['charge_card:execute']);
  });

  it("the run's abort at 200 ms reaches the tool at once, not at its 20 s end", async () => {
    shop = await openLoopingShop('agents-abort');
    const guard = agentsGuard(shop.run, shop.guardOptions);
    const started = Date.now();
    let abortedAfterMs: number | null = null;
    const caller = new AbortController();
    const agent = new Agent({
      name: 'refunds',
      model: model(functionCall('slow_search', SEARCH, { callId: 'call-0' }), 3),
      toolUseBehavior: 'stop_on_first_tool',
      tools: [
        tool({
          name: 'slow_search',
          description: 'A search that takes 20 s unless aborted',
          parameters: z.object({ q: z.string() }),
          execute: guard.execute(
            'slow_search',
            (_args: { q: string }, _context, details) =>
              new Promise<string>((resolve, reject) => {
                // The caller aborts 200 ms after the tool started: an abort before it would prove nothing.
                setTimeout(() => caller.abort(), 200);
                const done = setTimeout(() => resolve('late'), 20_000);
                details?.signal?.addEventListener('abort', () => {
                  abortedAfterMs = Date.now() - started;
                  clearTimeout(done);
                  reject(details.signal?.reason);
                });
              }),
          ),
        }),
      ],
    });

    await new Runner({ tracingDisabled: true })
      .run(agent, 'Refund order A1', { signal: caller.signal })
      .catch(() => undefined);
    expect(abortedAfterMs).not.toBeNull();
    expect(abortedAfterMs).toBeLessThan(10_000);
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('an agent with an outputType ends a stop with stopOutput, a value of that type', async () => {
    shop = await openLoopingShop('agents-output-type');
    const Answer = z.object({ status: z.string(), note: z.string() });
    const guard = agentsGuard(shop.run, {
      ...shop.guardOptions,
      stopOutput: (report) => ({ status: report.terminalState, note: report.guardReason }),
    });
    const agent = new Agent({
      name: 'refunds',
      model: model(functionCall('search_docs', SEARCH, { callId: 'call-0' })),
      outputType: Answer,
      toolUseBehavior: guard.toolUseBehavior,
      tools: [searchTool(guard)],
    });

    const result = await new Runner({ tracingDisabled: true }).run(agent, 'Refund order A1', {
      maxTurns: 20,
    });

    expect(result.finalOutput).toEqual({ status: 'STOPPED_LOOP_GUARD', note: 'exact_repeat' });
    expect(shop.searches()).toBe(2);
  });

  it('an agent with an outputType and no stopOutput ends with a coded run_stopped error, not a ModelBehaviorError', async () => {
    shop = await openLoopingShop('agents-output-type-missing');
    const guard = agentsGuard(shop.run, shop.guardOptions);
    const agent = new Agent({
      name: 'refunds',
      model: model(functionCall('search_docs', SEARCH, { callId: 'call-0' })),
      outputType: z.object({ answer: z.string() }),
      toolUseBehavior: guard.toolUseBehavior,
      tools: [searchTool(guard)],
    });

    const failure = await new Runner({ tracingDisabled: true })
      .run(agent, 'Refund order A1', { maxTurns: 20 })
      .then(
        () => null,
        (e: unknown) => e,
      );

    expect(failure).toMatchObject({ name: 'LoopguardError', code: 'run_stopped' });
    expect(String((failure as Error).message)).toMatch(/stopOutput/);
    expect(shop.searches()).toBe(2);
  });
});
