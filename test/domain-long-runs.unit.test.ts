import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DEFAULT_POLICY, diceSimilarity } from '../src/domain/index.js';
import { nodeHashing } from '../src/runtime/node-hashing.js';
import { replayRun } from '../src/trace/replay.js';
import type { TraceCall, TraceRun } from '../src/trace/trace-run.js';

/**
 * Agents in the field run long: coding agents make 30 to 150 calls and re-run one test command
 * after every edit. The defaults must leave such runs alone, and still stop the degenerate ones.
 */
const deps = { hashing: nodeHashing('test'), similarity: diceSimilarity };
const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const call = (step: number, tool: string, args: Record<string, unknown>, result: string): TraceCall => ({
  step,
  tool,
  args,
  result,
  result_sha256: sha(result),
  after_user_turn: step === 0,
});
const run = (calls: TraceCall[]): TraceRun => ({ run_id: 'long', outcome: { success: true }, calls });

describe('long coding-agent runs under the default policy', () => {
  it('edit then the same test command, 150 calls, edits answer "ok" and the failure changes slowly', () => {
    const calls: TraceCall[] = [];
    for (let i = 0; calls.length < 150; i++) {
      calls.push(call(calls.length, 'edit_file', { path: 'src/app.ts', patch: `fix attempt ${i}` }, 'ok'));
      calls.push(call(calls.length, 'bash', { cmd: 'npm test' }, `3 failing (${Math.floor(i / 5)})`));
    }
    expect(replayRun(run(calls), DEFAULT_POLICY, deps).stopIndex).toBeNull();
  });

  it('edits whose test output stays the same failure are not a loop: each edit is new', () => {
    const calls: TraceCall[] = [];
    for (let i = 0; calls.length < 120; i++) {
      calls.push(call(calls.length, 'edit_file', { path: `src/m${i % 7}.ts`, patch: `try ${i}` }, ''));
      calls.push(call(calls.length, 'bash', { cmd: 'npm test' }, '1 failing: expected 2 to be 3'));
    }
    expect(replayRun(run(calls), DEFAULT_POLICY, deps).stopIndex).toBeNull();
  });

  it('a read / edit / test / status cycle with a stubborn failure runs to its end', () => {
    const calls: TraceCall[] = [];
    for (let i = 0; calls.length < 140; i++) {
      calls.push(call(calls.length, 'read_file', { path: 'src/app.ts' }, `v${i}`));
      calls.push(call(calls.length, 'edit_file', { path: 'src/app.ts', patch: `p${i}` }, 'ok'));
      calls.push(call(calls.length, 'bash', { cmd: 'npm test' }, '1 failing'));
      calls.push(call(calls.length, 'bash', { cmd: 'git status' }, ' M src/app.ts'));
    }
    expect(replayRun(run(calls), DEFAULT_POLICY, deps).stopIndex).toBeNull();
  });

  it('but the same test command re-run three times with nothing changed in between is stopped', () => {
    const calls = [
      call(0, 'edit_file', { path: 'a.ts', patch: 'x' }, 'ok'),
      call(1, 'bash', { cmd: 'npm test' }, '1 failing'),
      call(2, 'bash', { cmd: 'npm test' }, '1 failing'),
      call(3, 'bash', { cmd: 'npm test' }, '1 failing'),
    ];
    const r = replayRun(run(calls), DEFAULT_POLICY, deps);
    expect(r.stopIndex).toBe(3);
    expect(r.summary.rule).toBe('exact_repeat');
  });

  it('and appending the same line again and again (new args, same result) stops for no progress only when nothing changes', () => {
    const appends = Array.from({ length: 30 }, (_, i) =>
      call(i, 'append_line', { path: 'notes.md', line: 'TODO: check' }, 'ok'),
    );
    const r = replayRun(run(appends), DEFAULT_POLICY, deps);
    expect(r.stopIndex).toBe(2);
  });
});
