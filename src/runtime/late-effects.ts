import { sameOwner } from '../domain/index.js';
import type { ClaimOwner } from '../ports/ledger.js';

/**
 * Side effects whose tool passed its step timeout but is still running in this process (a tool
 * that ignores its AbortSignal, a request already on the wire). Its key is in doubt in the ledger,
 * yet this process knows more than any provider can say yet: the attempt may land in a moment.
 * While it runs, a claim of its key here waits instead of asking `reconcile`, whose "it did not
 * happen" would be read before the charge lands and run it a second time. Once the tool has
 * answered, the key is as in doubt as before: what it answered after its signal fired says
 * nothing sure (a tool may give up with a value), so `reconcile` or a person settles it.
 * One guard's, never a decision's input but through the ledger view it gives a claim.
 */
export class LateEffects {
  private readonly running = new Map<string, ClaimOwner>();

  /** Whether the in-doubt attempt of `owner` on `key` is still running here. */
  runs(key: string, owner: ClaimOwner): boolean {
    const r = this.running.get(key);
    return r !== undefined && sameOwner(r, owner);
  }

  /** Holds `key` for `owner` until `late`, the tool's own promise from its timeout on, settles. */
  track(key: string, owner: ClaimOwner, late: Promise<unknown>): void {
    this.running.set(key, owner);
    const done = () => {
      if (this.running.get(key) === owner) this.running.delete(key);
    };
    late.then(done, done);
  }
}
