import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, Runner, setTracingDisabled, ToolGuardrailFunctionOutputFactory, tool } from '@openai/agents';
import { assistantMessage, functionCall, modelResponder, ScriptedModel } from '@openai/agents/testing';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { agentsGuard } from '../src/adapters/openai-agents.js';
import { createGuard, type Guard } from '../src/runtime/index.js';

/**
 * One model turn asks for two tools in parallel. The guard's input guardrail allows the
 * charge (and holds the run's turn for its execute); a sibling's own guardrail trips
 * (`throwException`, e.g. a PII check), so the SDK cancels the sibling calls before the charge's
 * execute. The charge certainly never ran: at the step timeout it is recorded not run (its key
 * free, nothing in doubt), so the charge asked again runs once. Before, it was recorded like a
 * tool that never answered: its key in doubt, the charge asked again refused.
 */
let dir: string;
let guard: Guard;
beforeAll(() => setTracingDisabled(true));
afterEach(async () => {
  await guard.close().catch(() => undefined);
  await rm(dir, { recursive: true, force: true });
});

describe('agentsGuard: a call its guardrail allowed whose execute the SDK cancelled (a sibling tripwire)', () => {
  it('a charge whose execute never came is not left in doubt: asked again, it runs once', async () => {
    dir = await mkdtemp(join(tmpdir(), 'lg-review-agents-'));
    guard = await createGuard({ dataDir: dir, policy: { stepTimeoutMs: 400 } });
    const run = await guard.startRun({ runId: 'review-agents-sibling', tenant: 'acme' });
    const lg = agentsGuard(run, {
      operationKey: (t, a) => (t === 'charge_card' ? `acme:charge:${String(a.order)}` : undefined),
    });
    let charges = 0;
    const charge = tool({
      name: 'charge_card',
      description: 'Charge the card',
      parameters: z.object({ order: z.string(), amount: z.number() }),
      inputGuardrails: [lg.inputGuardrail],
      execute: lg.execute('charge_card', () => {
        charges++;
        return `charged ${charges}`;
      }),
    });
    const note = tool({
      name: 'send_note',
      description: 'Send a note',
      parameters: z.object({ text: z.string() }),
      inputGuardrails: [
        {
          type: 'tool_input',
          name: 'pii',
          run: async () => ToolGuardrailFunctionOutputFactory.throwException({ pii: true }),
        },
      ],
      execute: async () => 'sent',
    });
    const model = new ScriptedModel([
      modelResponder(() => [
        functionCall('charge_card', { order: 'A1', amount: 30 }, { callId: 'c1' }),
        functionCall('send_note', { text: 'card 4111 1111 1111 1111' }, { callId: 'n1' }),
      ]),
    ]);
    const agent = new Agent({
      name: 'refunds',
      model,
      tools: [charge, note],
      toolUseBehavior: lg.toolUseBehavior,
    });
    await expect(new Runner({ tracingDisabled: true }).run(agent, 'Refund A1')).rejects.toThrow();
    expect(charges).toBe(0); // the charge never ran

    // The app retries the charge (same loopguard run): it was never made, so it should run now.
    const again = new ScriptedModel([
      modelResponder(() => [functionCall('charge_card', { order: 'A1', amount: 30 }, { callId: 'c2' })]),
      modelResponder(() => [assistantMessage('done')]),
    ]);
    const agent2 = new Agent({
      name: 'refunds',
      model: again,
      tools: [charge],
      toolUseBehavior: lg.toolUseBehavior,
    });
    const result = await new Runner({ tracingDisabled: true }).run(agent2, 'Refund A1');
    const key = Object.entries(run.state.operations).map(
      ([k, o]) => `${k}:${(o as { status: string }).status}`,
    );
    console.log('operations after:', key, 'final:', result.finalOutput);
    expect(charges).toBe(1);
  }, 20_000);
});
