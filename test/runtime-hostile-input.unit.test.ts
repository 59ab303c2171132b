/**
 * The library fed hostile input: each bad input is an error naming its argument path, nothing
 * runs that should not, and the run goes on afterwards. The pass condition is the tool's own
 * counter wherever a tool could have run.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_DEPTH, MAX_TIMER_MS, own } from '../src/domain/index.js';
import { MemorySchemaStore } from '../src/events/memory-schema-store.js';
import type { PolicyInput } from '../src/index.js';
import type { LogRecord } from '../src/log/event-log.js';
import { MemoryLog } from '../src/log/memory-log.js';
import type { RunLog } from '../src/log/run-log.js';
import {
  type ClaimOwner,
  createGuard,
  type Guard,
  guardTools,
  type Ledger,
  outcome,
  SqliteLedger,
  ToolError,
} from '../src/runtime/index.js';

const dirs: string[] = [];
const guards: Guard[] = [];
afterEach(async () => {
  for (const g of guards.splice(0)) await g.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function guardWith(policy: PolicyInput = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'loopguard-hostile-'));
  dirs.push(dataDir);
  const guard = await createGuard({ policy, dataDir, secretKey: 'test-key' });
  guards.push(guard);
  return guard;
}

const nested = (depth: number): unknown => {
  let v: unknown = 'leaf';
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
};

describe('names that are also object internals', () => {
  it.each(['constructor', '__proto__', 'toString', 'valueOf', 'hasOwnProperty'])(
    'a tool named %s runs and is counted like any other',
    async (tool) => {
      const run = await (await guardWith({ tools: { [tool]: { maxCalls: 2 } } })).startRun({ runId: 'r' });
      let n = 0;
      for (const q of ['a', 'b', 'c'])
        await run.call({ tool, args: { q } }, () => {
          n++;
          return q;
        });
      expect(n).toBe(2);
      expect(run.state.perTool[tool]).toBe(2);
    },
  );

  it('guardTools keeps a tool named __proto__ in the map it returns', async () => {
    const run = await (await guardWith()).startRun({ runId: 'r' });
    // A computed key defines an own property named __proto__, as JSON.parse does.
    const tools: Record<string, () => string> = { ['__proto__']: () => 'ran' };
    const wrapped = guardTools(run, tools);
    expect(Object.keys(wrapped)).toEqual(['__proto__']);
    expect(await own(wrapped, '__proto__')?.({})).toMatchObject({ status: 'executed', value: 'ran' });
  });

  it('an args key __proto__ is kept: three different calls are three different calls', async () => {
    const run = await (await guardWith()).startRun({ runId: 'r' });
    let n = 0;
    // The same answer each time: were the three calls one, the third would be an exact repeat.
    for (const v of ['1', '2', '3']) {
      const r = await run.call({ tool: 'search', args: JSON.parse(`{"__proto__": "${v}"}`) }, () => {
        n++;
        return 'same';
      });
      expect(r.status).toBe('executed');
    }
    expect(n).toBe(3);
  });

  it('a policy for tools.__proto__ applies to the tool of that name', async () => {
    const guard = await guardWith(JSON.parse('{"tools": {"__proto__": {"maxCalls": 1}}}'));
    const run = await guard.startRun({ runId: 'r' });
    let n = 0;
    await run.call({ tool: '__proto__', args: { q: 1 } }, () => n++);
    const second = await run.call({ tool: '__proto__', args: { q: 2 } }, () => n++);
    expect(n).toBe(1);
    expect(second.status).not.toBe('executed');
  });

  it('an operation key named constructor is deduplicated, not taken for an existing entry', async () => {
    const run = await (await guardWith({ tools: { pay: { sideEffect: true } } })).startRun({ runId: 'r' });
    let n = 0;
    const req = { tool: 'pay', args: { order: 1 }, operationKey: 'constructor' };
    expect(
      (
        await run.call(req, () => {
          n++;
          return 'paid';
        })
      ).status,
    ).toBe('executed');
    expect(
      (
        await run.call(req, () => {
          n++;
          return 'paid';
        })
      ).status,
    ).toBe('cached');
    expect(n).toBe(1);
  });
});

describe('limits the encoder and the runtime can honour', () => {
  it(`args nested deeper than ${MAX_DEPTH} levels: too_deep, nothing runs, the run goes on`, async () => {
    const run = await (await guardWith()).startRun({ runId: 'r' });
    let n = 0;
    await expect(run.call({ tool: 's', args: nested(5000) as object }, () => n++)).rejects.toMatchObject({
      code: 'too_deep',
      message: expect.stringMatching(/^args(\.a)+: nested deeper than/),
    });
    expect(
      (
        await run.call({ tool: 's', args: { q: 1 } }, () => {
          n++;
          return 'ok';
        })
      ).status,
    ).toBe('executed');
    expect(n).toBe(1);
  });

  it('a side effect with args that can never be recorded takes no claim in the ledger', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'loopguard-hostile-'));
    dirs.push(dataDir);
    const files = SqliteLedger.open(dataDir);
    let claims = 0;
    const ledger: Ledger = Object.assign(Object.create(files) as Ledger, {
      claim: (key: string, owner: ClaimOwner) => {
        claims++;
        return files.claim(key, owner);
      },
    });
    const policy = { tools: { pay: { sideEffect: true } } };
    const guard = await createGuard({ policy, dataDir, ledger, secretKey: 'k' });
    guards.push(guard);
    const run = await guard.startRun({ runId: 'r' });
    let n = 0;
    const req = { tool: 'pay', args: nested(100) as object, operationKey: 'pay:1' };
    await expect(run.call(req, () => n++)).rejects.toMatchObject({ code: 'too_deep' });
    expect(claims).toBe(0);
    expect(n).toBe(0);
  });

  it('args over the size limit: too_large, nothing runs', async () => {
    const run = await (await guardWith()).startRun({ runId: 'r' });
    let n = 0;
    await expect(run.call({ tool: 's', args: { q: 'x'.repeat(300_000) } }, () => n++)).rejects.toMatchObject({
      code: 'too_large',
    });
    expect(n).toBe(0);
  });

  it.each([
    ['req.progressVersion', { progressVersion: 1.5 }],
    ['req.costEstimateUsd', { costEstimateUsd: 1e300 }],
    ['req.operationKey', { operationKey: '   ' }],
    ['req.tool', { tool: '\uD800' }],
  ])('a bad %s is refused before anything is claimed or run', async (path, bad) => {
    const run = await (await guardWith()).startRun({ runId: 'r' });
    let n = 0;
    await expect(run.call({ tool: 's', args: {}, ...bad }, () => n++)).rejects.toMatchObject({
      code: 'invalid_call',
      message: expect.stringContaining(`${path}: `),
    });
    expect(n).toBe(0);
    expect(
      (
        await run.call({ tool: 's', args: {} }, () => {
          n++;
          return 'ok';
        })
      ).status,
    ).toBe('executed');
  });

  it('a side effect returning tokens: 1.5 ran once: in doubt, named, and the run is not wedged', async () => {
    const guard = await guardWith({ tools: { pay: { sideEffect: true } } });
    const run = await guard.startRun({ runId: 'r' });
    let n = 0;
    const r = await run.call({ tool: 'pay', args: { o: 1 }, operationKey: 'pay:1' }, () => {
      n++;
      return outcome.success('paid', { tokens: 1.5 });
    });
    expect(r).toMatchObject({ status: 'executed', kind: 'FATAL', code: 'invalid_result' });
    expect(JSON.stringify(r)).toContain('result.tokens: expected an integer');
    expect(run.state.status).toBe('NEEDS_HUMAN');
    expect(run.state.report?.inDoubtOperations).toHaveLength(1);
    // Not call_in_flight: the run answers, and nothing runs again blindly.
    const again = await run.call({ tool: 'pay', args: { o: 1 }, operationKey: 'pay:1' }, () => n++);
    expect(again.status).toBe('stopped');
    expect(n).toBe(1);
  });

  it.each([
    [
      'a thrown ToolError',
      () => {
        throw new ToolError('BOGUS' as never, 'declined');
      },
      'error.kind',
    ],
    [
      'a thrown ToolError of kind SUCCESS',
      () => {
        throw new ToolError('SUCCESS' as never, 'fine');
      },
      'error.kind',
    ],
    ['an outcome', () => ({ ...outcome.success('paid'), kind: 'BOGUS' }), 'result.kind'],
  ])(
    'a side effect that ran and answered with %s of a kind the guard has no policy for: in doubt, named, recorded (from JS, types aside)',
    async (_, tool, path) => {
      const guard = await guardWith({ tools: { pay: { sideEffect: true } } });
      const run = await guard.startRun({ runId: 'r' });
      let n = 0;
      const r = await run.call({ tool: 'pay', args: { o: 1 }, operationKey: 'pay:1' }, () => {
        n++;
        return tool();
      });
      expect(r).toMatchObject({ status: 'executed', kind: 'FATAL', code: 'invalid_result' });
      expect(JSON.stringify(r)).toContain(`${path}: expected one of`);
      expect(run.state.status).toBe('NEEDS_HUMAN');
      expect(run.state.report?.inDoubtOperations).toHaveLength(1);
      expect((await run.call({ tool: 'pay', args: { o: 1 }, operationKey: 'pay:1' }, () => n++)).status).toBe(
        'stopped',
      );
      expect(n).toBe(1);
    },
  );

  it.each([
    ['retryAfterMs', { retryAfterMs: 1e300 }],
    ['progressVersion', { progressVersion: 1.5 }],
    ['costUsd', { costUsd: Number.NaN }],
  ])(
    'a read-only tool reporting a bad %s: FATAL invalid_result naming it, no throw',
    async (field, extra) => {
      const run = await (await guardWith()).startRun({ runId: 'r' });
      const r = await run.call({ tool: 's', args: {} }, () => outcome.success('x', extra));
      expect(r).toMatchObject({ status: 'executed', code: 'invalid_result' });
      expect(JSON.stringify(r)).toContain(`result.${field}`);
    },
  );

  it('a circular result is an invalid_result naming the cycle, never "[object Object]"', async () => {
    const run = await (await guardWith()).startRun({ runId: 'r' });
    const a: Record<string, unknown> = { n: 1 };
    a.self = a;
    const r = await run.call({ tool: 's', args: {} }, () => a);
    expect(r).toMatchObject({ status: 'executed', kind: 'FATAL', code: 'invalid_result' });
    expect(JSON.stringify(r)).toContain('result.self: circular reference');
  });

  it(`stepTimeoutMs above ${MAX_TIMER_MS} is refused: Node would fire the timer at once`, async () => {
    await expect(guardWith({ stepTimeoutMs: 1e10 })).rejects.toMatchObject({
      code: 'invalid_policy',
      message: expect.stringContaining(`stepTimeoutMs: must be at most ${MAX_TIMER_MS}`),
    });
  });
});

describe('the library API', () => {
  it('run.call from inside a tool of the same run is refused at once, not after the step timeout', async () => {
    const run = await (await guardWith({ stepTimeoutMs: 60_000 })).startRun({ runId: 'r' });
    const started = Date.now();
    let inner: unknown;
    const r = await run.call({ tool: 'outer', args: {} }, async () => {
      inner = await run.call({ tool: 'inner', args: {} }, () => 'x').catch((e: unknown) => e);
      return 'done';
    });
    expect(r.status).toBe('executed');
    expect(inner).toMatchObject({ code: 'reentrant_call' });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('a tool may call run.call of another run', async () => {
    const guard = await guardWith();
    const outer = await guard.startRun({ runId: 'outer' });
    const sub = await guard.startRun({ runId: 'sub' });
    const r = await outer.call({ tool: 'delegate', args: {} }, async () => {
      const inner = await sub.call({ tool: 'search', args: { q: 1 } }, () => 'found');
      return inner.status;
    });
    expect(r).toMatchObject({ status: 'executed', value: 'executed' });
  });

  it('createGuard({ policy }) validates an object that merely looks like a Policy', async () => {
    await expect(
      // Cast: the typed policy refuses this at compile time; a JS caller or a JSON file does not.
      guardWith({ rules: { exact_repeat: 'explode' }, tools: {}, taskTypes: {} } as unknown as PolicyInput),
    ).rejects.toMatchObject({
      code: 'invalid_policy',
      message: expect.stringContaining('rules.exact_repeat'),
    });
    const guard = await guardWith({ rules: {}, tools: {}, taskTypes: {} });
    expect(guard.policy.maxSteps).toBe(200);
  });

  it('recordModelUsage after finish is refused; bad usage numbers name the field', async () => {
    const run = await (await guardWith()).startRun({ runId: 'r' });
    await expect(run.recordModelUsage({ tokensIn: 1.5, tokensOut: 0, costUsd: 0 })).rejects.toMatchObject({
      code: 'invalid_usage',
      message: expect.stringContaining('usage.tokensIn'),
    });
    await run.finish({ verified: true });
    await expect(run.recordModelUsage({ tokensIn: 1, tokensOut: 1, costUsd: 0 })).rejects.toMatchObject({
      code: 'run_ended',
    });
  });

  it.each([
    ['opts.runId', { runId: '   ' }],
    ['opts.runId', { runId: 'a\uDC00' }],
    ['opts.progressVersion', { runId: 'r', progressVersion: -1 }],
    ['opts.meta', { runId: 'r', meta: { k: 1 } }],
  ])('startRun refuses a bad %s', async (path, opts) => {
    const guard = await guardWith();
    await expect(guard.startRun(opts as never)).rejects.toMatchObject({
      code: 'invalid_input',
      message: expect.stringContaining(`${path}: `),
    });
  });

  it('a log that fails after the tool ran never says "nothing was executed"', async () => {
    const memory = new MemoryLog();
    let down = false;
    const log: RunLog = Object.assign(Object.create(memory) as RunLog, {
      append: (topic: string, records: readonly LogRecord[]) =>
        down ? Promise.reject(new Error('disk full')) : memory.append(topic, records),
    });
    const dataDir = mkdtempSync(join(tmpdir(), 'loopguard-hostile-'));
    dirs.push(dataDir);
    const guard = await createGuard({ dataDir, log, schemaStore: new MemorySchemaStore(), secretKey: 'k' });
    guards.push(guard);
    const run = await guard.startRun({ runId: 'r' });
    let n = 0;
    // The result rides on the run's next write (one durable write per call): that write says so.
    await run.call({ tool: 's', args: {} }, () => {
      n++;
      down = true;
      return 'done';
    });
    const r = run.call({ tool: 's', args: { next: 1 } }, () => {
      n++;
      return 'next';
    });
    await expect(r).rejects.toMatchObject({
      code: 'log_unavailable',
      message: expect.stringContaining('the tool ran but its result was not recorded'),
    });
    await expect(r).rejects.not.toMatchObject({ message: expect.stringContaining('nothing was executed') });
    expect(n).toBe(1);
  });

  it('resume, checkpoint, settle and reissue name a bad argument and record nothing for it', async () => {
    const guard = await guardWith({ tools: { pay: { sideEffect: true } } });
    const run = await guard.startRun({ runId: 'r' });
    const seq = run.state.seq;
    await expect(guard.resume('r', { preconditionChange: 42 } as never)).rejects.toMatchObject({
      code: 'invalid_input',
      message: expect.stringContaining('change.preconditionChange: expected a string'),
    });
    await expect(guard.resume('  ', { preconditionChange: 'x' })).rejects.toMatchObject({
      message: expect.stringContaining('runId: '),
    });
    await expect(run.checkpoint('   ')).rejects.toMatchObject({
      message: expect.stringContaining('checkpointId: '),
    });
    await expect(run.settle('', { happened: true, settledBy: 'ops' })).rejects.toMatchObject({
      message: expect.stringContaining('operationKey: '),
    });
    await expect(run.settle('k', { happened: true, settledBy: undefined } as never)).rejects.toMatchObject({
      message: expect.stringContaining('verdict.settledBy: '),
    });
    await expect(run.reissue('k', '\uD800', { reason: 'again' })).rejects.toMatchObject({
      message: expect.stringContaining('newKey: not valid Unicode'),
    });
    expect(run.state.seq).toBe(seq);
  });
});
