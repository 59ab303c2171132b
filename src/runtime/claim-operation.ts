import { type ErrorCode, type LedgerView, LoopguardError, UnavailableError } from '../domain/index.js';
import type { ClaimOwner, Ledger } from '../ports/ledger.js';
import type { CallHooks } from './call-request.js';
import type { LateEffects } from './late-effects.js';

interface Settlement {
  readonly happened: boolean;
  readonly resultJson: string;
}

export interface OperationClaim {
  readonly view: LedgerView;
  readonly won: boolean;
  /** What reconcile said about an in-doubt operation; the run records it before deciding. */
  readonly settled: Settlement | null;
}

/** Refusals of the ledger's own rules, as opposed to a ledger that cannot be reached. */
const LEDGER_RULES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'not_claim_owner',
  'reissue_refused',
  'settle_refused',
]);

/** A ledger that cannot answer is treated like a log that cannot record: nothing runs. */
export async function ledgerCall<T>(what: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    if (e instanceof LoopguardError && LEDGER_RULES.has(e.code)) throw e;
    throw new UnavailableError(
      'log_unavailable',
      `the ledger did not answer (${what}); nothing was executed (${(e as Error).message})`,
      { cause: e },
    );
  }
}

/**
 * Claims `key` for one call. Exactly one claimant wins; the others see the operation completed (its
 * result comes back cached), in flight (wait), or in doubt. In doubt is settled by `reconcile`
 * when the tool has one; a "did not happen" frees the key and the claim is tried once more.
 */
export async function claimOperation(
  ledger: Ledger,
  /** The key as the ledger holds it (redacted), and as the caller gave it (for reconcile). */
  { key, asked }: { readonly key: string; readonly asked: string },
  owner: ClaimOwner,
  hooks: CallHooks,
  /** Whether this run's own log has an entry (claimed, in doubt, completed) for the key. */
  recorded: boolean,
  /** The reconciled result as it is recorded. */
  recordable: (result: unknown) => string,
  opts: { readonly late?: LateEffects | undefined; readonly withdrawOrphans?: boolean | undefined } = {},
): Promise<OperationClaim> {
  const { late, withdrawOrphans = true } = opts;
  let settled: Settlement | null = null;
  let reconciled = false;
  for (let attempt = 0; attempt < 3; attempt++) {
    const c = await ledgerCall(`claim ${key}`, () => ledger.claim(key, owner));
    if (c.status === 'won') return { view: { status: 'none' }, won: true, settled };
    if (c.status === 'completed')
      return { view: { status: 'completed', resultJson: c.resultJson }, won: false, settled };
    if (c.status === 'in_flight' && c.owner.runId === owner.runId && !recorded && withdrawOrphans) {
      // A claim of this very run that its log never recorded: its caller got an error before
      // deciding (a ledger answer lost in a broker outage), and record-first means nothing ran.
      // Calls of one run go one at a time, so it is no live call either: withdraw it, claim again.
      const orphan = c.owner;
      await ledgerCall(`withdraw ${key}`, () => ledger.release(key, orphan));
      continue;
    }
    // In doubt, but its tool is still running here past its timeout: in flight, as far as anyone
    // can tell yet; a provider asked now could say "not yet" of a charge about to land.
    if (c.status === 'in_flight' || late?.runs(key, c.owner) === true)
      return { view: { status: 'claimed', byRun: c.owner.runId }, won: false, settled };
    if (hooks.reconcile === undefined || reconciled)
      return { view: { status: 'in_doubt' }, won: false, settled };
    reconciled = true;
    const answer = await hooks.reconcile(asked);
    const s = { happened: answer.happened, resultJson: recordable(answer.result) };
    try {
      // The answer is about this holder's attempt: if another run settled it and took the key
      // meanwhile (it may be running it now), the answer is stale; claim again and see.
      const about = c.owner;
      await ledgerCall(`settle ${key}`, () => ledger.settle(key, s.happened, s.resultJson, about));
    } catch (e) {
      if (e instanceof LoopguardError && e.code === 'settle_refused') continue;
      throw e;
    }
    settled = s;
    if (s.happened) return { view: { status: 'completed', resultJson: s.resultJson }, won: false, settled };
  }
  return { view: { status: 'in_doubt' }, won: false, settled };
}
