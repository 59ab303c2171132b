/**
 * The requests of a client waiting for their decisions. A decision is theirs only when both its
 * run id and its request id are: request ids are chosen by clients and travel in the clear on
 * loopguard.requests, so another client can publish one of ours on its own run, and its answer
 * (an `execute` on a live run) must never reach a call of ours (whose run may be cancelled).
 */
import { UnavailableError } from '../domain/index.js';
import type { WireDecision } from '../service/service-topics.js';

interface Waiter {
  readonly resolve: (d: WireDecision) => void;
  readonly timer: NodeJS.Timeout;
}

/** Run id and request id in one key; NUL cannot occur in a valid name, so no two pairs collide. */
const keyOf = (runId: string, requestId: string): string => `${runId}\u0000${requestId}`;

export class PendingDecisions {
  private readonly waiters = new Map<string, Waiter>();

  /** Resolves with the decision for `requestId` of `runId`; rejects with `decision_timeout` after timeoutMs. */
  wait(runId: string, requestId: string, timeoutMs: number): Promise<WireDecision> {
    const key = keyOf(runId, requestId);
    return new Promise<WireDecision>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(key);
        reject(
          new UnavailableError(
            'decision_timeout',
            `no decision for request ${requestId} of run ${runId} within ${timeoutMs} ms; nothing was executed. Send the same request id again: the worker answers it once`,
            { details: { requestId, runId } },
          ),
        );
      }, timeoutMs);
      this.waiters.set(key, { resolve, timer });
    });
  }

  /** Hands `d` to the request it answers; one for another run (or nobody's) is dropped. */
  deliver(d: WireDecision): boolean {
    const key = keyOf(d.run_id, d.request_id);
    const w = this.waiters.get(key);
    if (w === undefined) return false;
    this.waiters.delete(key);
    clearTimeout(w.timer);
    w.resolve(d);
    return true;
  }

  clear(): void {
    for (const w of this.waiters.values()) clearTimeout(w.timer);
    this.waiters.clear();
  }
}
