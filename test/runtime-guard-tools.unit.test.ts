import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createGuard, type Guard, guardTools, outcome } from '../src/index.js';

const dirs: string[] = [];
const guards: Guard[] = [];
afterEach(async () => {
  for (const g of guards.splice(0)) await g.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function startRun(runId: string) {
  const dataDir = mkdtempSync(join(tmpdir(), 'loopguard-gt-'));
  dirs.push(dataDir);
  const guard = await createGuard({ dataDir });
  guards.push(guard);
  return guard.startRun({ runId });
}

describe('guardTools', () => {
  it('takes typed tool functions and gives typed results; option tool names are checked', async () => {
    const run = await startRun('typed');
    const tools = guardTools(
      run,
      {
        charge_card: async (args: { order: string; amount: number }) => ({
          receipt: `r-${args.order}`,
          amount: args.amount,
        }),
        search_docs: (args) => `no document matches ${String(args.q)}`,
        flaky: () => outcome.retryable('rate_limited'),
      },
      {
        operationKey: (tool, args) =>
          tool === 'charge_card' ? `acme:charge:${String(args.order)}` : undefined,
      },
    );

    const r = await tools.charge_card({ order: 'A1', amount: 30 });
    if (r.status !== 'executed' || r.kind !== 'SUCCESS') throw new Error(`not executed: ${r.status}`);
    // Typed: the receipt is a string without a cast.
    const receipt: string = r.value.receipt;
    expect(receipt).toBe('r-A1');
    const again = await tools.charge_card({ order: 'A1', amount: 30 });
    if (again.status !== 'cached') throw new Error(`not cached: ${again.status}`);
    expect(again.value.amount).toBe(30);
    expect((await tools.search_docs({ q: 'x' })).status).toBe('executed');

    // @ts-expect-error: the arguments are the tool's own type
    await tools.charge_card({ order: 'A1' }).catch(() => undefined);
    // @ts-expect-error: a tool name in the options that is not in the map does not compile
    guardTools(run, { search_docs: () => 'x' }, { sideEffects: ['serch_docs'] });
  });

  it("combines the caller's signal with the guard's: an abort at 200 ms reaches the tool at once", async () => {
    const run = await startRun('abort');
    const started = Date.now();
    let abortedAfterMs: number | null = null;
    const tools = guardTools(run, {
      slow_search: (_args, signal) =>
        new Promise<string>((resolve, reject) => {
          const done = setTimeout(() => resolve('late'), 3000);
          signal.addEventListener('abort', () => {
            abortedAfterMs = Date.now() - started;
            clearTimeout(done);
            reject(signal.reason);
          });
        }),
    });

    const r = await tools.slow_search({ q: 'x' }, { signal: AbortSignal.timeout(200) });

    expect(abortedAfterMs).not.toBeNull();
    expect(abortedAfterMs).toBeLessThan(1000);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(r).toMatchObject({ status: 'executed', kind: 'RETRYABLE' });
  });

  it('takes the arguments as they are when called: an object changed while the call waits changes nothing', async () => {
    const run = await startRun('snapshot');
    const charged: string[] = [];
    const tools = guardTools(
      run,
      {
        charge_card: async (a: { order: string; lines: string[] }) => {
          charged.push(`${a.order}:${a.lines.join('+')}`);
          return { order: a.order };
        },
      },
      { operationKey: (_tool, a) => `acme:charge:${String(a.order)}` },
    );
    const args = { order: 'A1', lines: ['x'] };
    const first = tools.charge_card(args);
    // The caller moves on to its next order before the first call had its turn.
    args.order = 'A2';
    args.lines.push('y');
    const second = tools.charge_card(args);
    await Promise.all([first, second]);
    // Before 2026-12-03: A2:x+y twice, under the keys of A1 and A2.
    expect(charged).toEqual(['A1:x', 'A2:x+y']);
    expect(Object.keys(run.state.operations).sort()).toEqual(['acme:charge:A1', 'acme:charge:A2']);
  });
});
