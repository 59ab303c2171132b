/**
 * The in-memory Ledger: one process's map of operation keys, for tests, evaluation and a guard
 * whose log is a MemoryLog. Every step applies the ledger rules (domain/ledger-rules.ts)
 * synchronously, so no two claimants interleave between the read and the write. A claim never
 * outlives its owner here, so none reads as in doubt for a dead owner.
 */
import { applyLedgerFact, IllegalStateError, type KeyEntry, type LedgerFact } from '../domain/index.js';
import {
  type ClaimOutcome,
  type ClaimOwner,
  type Ledger,
  type LedgerState,
  type ReissueNote,
  reissueRefusal,
  settleRefusal,
} from '../ports/ledger.js';
import { notClaimOwner } from './log-errors.js';

export class MemoryLedger implements Ledger {
  private readonly entries = new Map<string, KeyEntry>();
  private readonly notes = new Map<string, ReissueNote>();

  /** `nowMs` stamps claims (the ledger rules keep when a claim was made). */
  constructor(private readonly nowMs: () => number = Date.now) {}

  async claim(key: string, owner: ClaimOwner): Promise<ClaimOutcome> {
    const e = this.entries.get(key);
    if (e === undefined) {
      this.entries.set(key, { status: 'claimed', owner, atMs: this.nowMs() });
      return { status: 'won' };
    }
    if (e.status === 'completed') return { status: 'completed', resultJson: e.resultJson };
    return { status: e.status === 'claimed' ? 'in_flight' : 'in_doubt', owner: e.owner };
  }

  async complete(key: string, owner: ClaimOwner, resultJson: string): Promise<void> {
    this.apply(key, owner, { type: 'OperationCompleted', resultJson });
  }

  async markInDoubt(key: string, owner: ClaimOwner, reason: string): Promise<void> {
    this.apply(key, owner, { type: 'OperationInDoubt', reason });
  }

  async release(key: string, owner: ClaimOwner): Promise<void> {
    this.apply(key, owner, { type: 'OperationReleased' });
  }

  async settle(key: string, happened: boolean, resultJson = 'null', about?: ClaimOwner): Promise<void> {
    const e = this.entries.get(key);
    const refused = settleRefusal(key, this.state(key), about);
    if (refused !== null) throw new IllegalStateError('settle_refused', `ledger: ${refused}`);
    // A completion is final: settling never frees a side effect that is known to have happened.
    if (e === undefined || e.status === 'completed') return;
    if (!happened) this.entries.delete(key);
    else this.entries.set(key, { status: 'completed', owner: e.owner, resultJson });
  }

  async get(key: string): Promise<LedgerState | undefined> {
    return this.state(key);
  }

  async reissue(note: ReissueNote): Promise<void> {
    // No await between the check and the write: of two reissues onto one key, one goes through.
    const refused = reissueRefusal(
      note,
      this.state(note.oldKey),
      this.state(note.newKey) ?? this.notes.get(note.newKey),
    );
    if (refused !== null) throw new IllegalStateError('reissue_refused', `reissue: ${refused}`);
    this.notes.set(note.newKey, note);
  }

  async reissuedFrom(newKey: string): Promise<ReissueNote | undefined> {
    return this.notes.get(newKey);
  }

  async close(): Promise<void> {}

  private state(key: string): LedgerState | undefined {
    const e = this.entries.get(key);
    if (e === undefined || e.status !== 'claimed') return e;
    return { status: 'claimed', owner: e.owner };
  }

  /** The ledger rules decide; this only stores their answer (or refuses as they say). */
  private apply(key: string, owner: ClaimOwner, fact: LedgerFact): void {
    const step = applyLedgerFact(this.entries.get(key), fact, owner, this.nowMs());
    if (step.refused !== null) throw notClaimOwner(key, owner, step.refused);
    if (step.next === undefined) this.entries.delete(key);
    else this.entries.set(key, step.next);
  }
}
