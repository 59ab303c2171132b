/**
 * The idempotency ledger in front of every side effect, shared by every worker and process that
 * runs tools: exactly one claimant of an operation key wins; the others learn it is done (and get
 * its result), in flight, or in doubt. One port, several adapters, one contract suite.
 */
export interface ClaimOwner {
  readonly runId: string;
  readonly callId: string;
}

export type ClaimOutcome =
  | { readonly status: 'won' }
  | { readonly status: 'completed'; readonly resultJson: string }
  | { readonly status: 'in_flight'; readonly owner: ClaimOwner }
  | { readonly status: 'in_doubt'; readonly owner: ClaimOwner };

export type LedgerState =
  | { readonly status: 'claimed'; readonly owner: ClaimOwner }
  | { readonly status: 'completed'; readonly owner: ClaimOwner; readonly resultJson: string }
  | { readonly status: 'in_doubt'; readonly owner: ClaimOwner; readonly reason: string };

export interface Ledger {
  /** Atomically claims `key`; only a `won` claim may run the side effect. */
  claim(key: string, owner: ClaimOwner): Promise<ClaimOutcome>;
  /** The side effect happened; later claims get `completed` with this result. */
  complete(key: string, owner: ClaimOwner, resultJson: string): Promise<void>;
  /** The side effect may or may not have happened; nobody re-runs it blindly. */
  markInDoubt(key: string, owner: ClaimOwner, reason: string): Promise<void>;
  /** The claim was won but the side effect certainly did not run (the guard refused, or reconcile said so). */
  release(key: string, owner: ClaimOwner): Promise<void>;
  /** An in-doubt operation settled by reconcile or a person: done (with its result) or free to run again. */
  settle(key: string, happened: boolean, resultJson?: string): Promise<void>;
  get(key: string): Promise<LedgerState | undefined>;
  close(): Promise<void>;
}
