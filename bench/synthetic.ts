import { hash } from 'node:crypto';
import {
  DEFAULT_POLICY,
  diceSimilarity,
  type Policy,
  parsePolicy,
  type RecordedEvent,
} from '../src/domain/index.js';
import type { RunActor } from '../src/machines/index.js';
import { nodeHashing } from '../src/runtime/node-hashing.js';
import { replayRun } from '../src/trace/replay.js';

export const deps = { hashing: nodeHashing('bench'), similarity: diceSimilarity };

/** A policy with no step or call budget, so a run can be as long as the benchmark needs. */
export const unbounded: Policy = (() => {
  const p = parsePolicy({ maxSteps: null, maxToolCalls: null, maxWallClockMs: null });
  if (!p.ok) throw p.error;
  return p.value;
})();

export const defaults = DEFAULT_POLICY;

/** Arguments of the i-th call: small and realistic, new each time (a next page), so no loop rule fires. */
export const argsOf = (i: number) => ({
  query: 'refund policy for enterprise customers',
  page: i,
  limit: 20,
});
/** The tool result's sha256, hashed as the library hashes one (node-hashing.ts: one-shot `hash`). */
export const resultHashOf = (i: number) => hash('sha256', `result ${i}`, 'hex');

/** The events of a successful run of `calls` such searches, replayed through the guard under `policy`. */
export function searchRun(runId: string, calls: number, policy: Policy): readonly RecordedEvent[] {
  const trace = {
    run_id: runId,
    outcome: { success: true },
    calls: Array.from({ length: calls }, (_, i) => ({
      step: i,
      tool: 'search',
      args: argsOf(i),
      result: `r${i}`,
      result_sha256: resultHashOf(i),
      after_user_turn: i === 0,
    })),
  };
  return replayRun(trace, policy, deps).events;
}

/** One guarded no-op call: its request decided, recorded and committed, then its result the same way. */
export function guardedCall(
  actor: RunActor,
  i: number,
  record: (recs: RecordedEvent[]) => void = () => {},
): void {
  const req = actor.propose({ type: 'RequestToolCall', callId: `c${i}`, tool: 'search', args: argsOf(i) });
  if (!req.ok) throw req.error;
  record(req.value);
  actor.commit(req.value);
  const done = actor.propose({
    type: 'CompleteToolCall',
    callId: `c${i}`,
    kind: 'SUCCESS',
    resultHash: resultHashOf(i),
  });
  if (!done.ok) throw done.error;
  record(done.value);
  actor.commit(done.value);
}
