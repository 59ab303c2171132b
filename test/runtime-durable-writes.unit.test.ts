/**
 * One durable write per guarded call: the decision before a call is written (and awaited) before
 * the tool runs; the result and the decision after it ride on the next write, except a stop,
 * which is written at once. Guard.close writes what is held.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RecordedEvent } from '../src/domain/events.js';
import { SqliteLedger } from '../src/log/embedded/sqlite-ledger.js';
import type { RunStream } from '../src/ports/run-stream.js';
import { Guard } from '../src/runtime/guard.js';
import { ToolError } from '../src/runtime/tool-outcome.js';
import { memoryStream } from './support/memory-stream.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'lg-writes-'));
  dirs.push(dir);
  const stream = await memoryStream();
  const writes: RecordedEvent[][] = [];
  const counting: RunStream = {
    readStream: (id, from) => stream.readStream(id, from),
    readAll: (apply) => stream.readAll(apply),
    childrenOf: (id) => stream.childrenOf(id),
    load: (id) => stream.load(id),
    snapshot: (s) => stream.snapshot(s),
    close: () => stream.close(),
    appendToStream: async (id, events, opts) => {
      const done = await stream.appendToStream(id, events, opts);
      writes.push([...events]);
      return done;
    },
  };
  const guard = new Guard({
    store: counting,
    ledger: SqliteLedger.open(dir),
    policy: undefined,
    secretKey: 'test-key',
  });
  return { guard, stream, writes };
}

const types = (es: readonly RecordedEvent[]) => es.map((e) => e.event.type);

describe('durable writes of a guarded call', () => {
  it('given five calls, when each runs, then each costs one write and its result rides on the next', async () => {
    const { guard, stream, writes } = await setup();
    const run = await guard.startRun({ runId: 'w1' });
    for (let i = 0; i < 5; i++) {
      let durableBefore = false;
      await run.call({ tool: 'search', args: { page: i } }, async () => {
        // The tool runs only once its execute decision is in the log.
        durableBefore = (await stream.readStream('w1')).some(
          (e) => e.event.type === 'GuardDecided' && e.event.callId?.endsWith(`-${i + 1}`) === true,
        );
        return `page ${i}`;
      });
      expect(durableBefore).toBe(true);
    }
    expect(writes).toHaveLength(6);
    expect(types(writes[2] ?? [])).toEqual([
      'ToolCallCompleted',
      'GuardDecided',
      'ToolCallRequested',
      'GuardDecided',
    ]);
    expect(types(await stream.readStream('w1')).at(-1)).toBe('GuardDecided');
    expect((await stream.readStream('w1')).length).toBeLessThan(run.state.seq);
    await guard.close();
    expect((await stream.readStream('w1')).length).toBe(run.state.seq);
    expect(writes).toHaveLength(7);
  });

  it('given a call whose result stops the run, then the stop is written before the call returns', async () => {
    const { guard, stream } = await setup();
    const run = await guard.startRun({ runId: 'w2' });
    const fatal = await run.call({ tool: 'deploy', args: {} }, async () => {
      throw Object.assign(new Error('nope'), { name: 'PermissionDenied' });
    });
    expect(fatal.status).toBe('executed');
    const stopped = await run.call({ tool: 'deploy', args: { again: true } }, async () => {
      throw new ToolError('FATAL', 'permission_denied');
    });
    expect(stopped).toMatchObject({ status: 'executed', report: { terminalState: 'NEEDS_HUMAN' } });
    expect(types(await stream.readStream('w2'))).toContain('RunStopped');
    expect((await stream.readStream('w2')).length).toBe(run.state.seq);
  });
});

describe('a write that failed for its caller but landed', () => {
  it('given an append that lands yet reports a timeout, when the run goes on, then it takes its own history back and the lost call is recorded as not run', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lg-landed-'));
    dirs.push(dir);
    const stream = await memoryStream();
    let landLate = false;
    const flaky: RunStream = {
      readStream: (id, from) => stream.readStream(id, from),
      readAll: (apply) => stream.readAll(apply),
      childrenOf: (id) => stream.childrenOf(id),
      load: (id) => stream.load(id),
      snapshot: (s) => stream.snapshot(s),
      close: () => stream.close(),
      appendToStream: async (id, events, opts) => {
        const done = await stream.appendToStream(id, events, opts);
        if (landLate) {
          landLate = false;
          throw new Error('request timed out');
        }
        return done;
      },
    };
    const guard = new Guard({
      store: flaky,
      ledger: SqliteLedger.open(dir),
      policy: undefined,
      secretKey: 'test-key',
    });
    const run = await guard.startRun({ runId: 'landed' });
    await run.call({ tool: 'search', args: { page: 1 } }, () => 'one');
    landLate = true;
    let ran = 0;
    await expect(
      run.call({ tool: 'search', args: { page: 2 } }, () => {
        ran++;
        return 'two';
      }),
    ).rejects.toMatchObject({ code: 'log_unavailable' });
    expect(ran).toBe(0);
    const next = await run.call({ tool: 'search', args: { page: 3 } }, () => 'three');
    expect(next.status).toBe('executed');
    await guard.close();
    const history = await stream.readStream('landed');
    expect(history.map((e) => e.seq)).toEqual(history.map((_, i) => i + 1));
    expect(history.length).toBe(run.state.seq);
    const notRun = history.find((e) => e.event.type === 'ToolCallCompleted' && e.event.code === 'not_run');
    expect(notRun).toBeDefined();
  });
});
