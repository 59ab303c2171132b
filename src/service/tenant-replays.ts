/**
 * Replay protection for signed requests. A signature holds only within SIGNATURE_WINDOW_MS of the
 * worker's clock (tenant-guard.ts), and within that window a worker remembers each signature it
 * decided: the same signed bytes published again once their run no longer remembers the answer
 * are refused as a replay. A client that re-sends after a timeout signs anew, so a re-send is
 * never a replay. Past `cap` entries the oldest by send time go, and every request sent no later
 * than the newest of them is refused as too old (a window shrunk to what fits, never a replay let
 * through).
 */

/** How far a signed request's `sent_at_ms` may be from the worker's clock, either way. */
export const SIGNATURE_WINDOW_MS = 5 * 60_000;

/** Signatures a worker remembers at most (about 100 bytes each). */
const SIGNATURES_KEPT = 250_000;

export interface Signed {
  readonly signature: string;
  readonly sentAtMs: number;
}

export type Seen = 'fresh' | 'replayed' | 'too_old';

export class SeenSignatures {
  /** Signature (its first 128 bits: ample to tell HMACs apart) -> its send time; oldest added first. */
  private readonly sentAt = new Map<string, number>();
  /** Requests sent at or before this may have been forgotten: they are refused. */
  private floorMs = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly windowMs = SIGNATURE_WINDOW_MS,
    private readonly cap = SIGNATURES_KEPT,
  ) {}

  get size(): number {
    return this.sentAt.size;
  }

  check(s: Signed): Seen {
    if (this.sentAt.has(s.signature.slice(0, 32))) return 'replayed';
    return s.sentAtMs <= this.floorMs ? 'too_old' : 'fresh';
  }

  /** Remembers requests decided and committed; forgets what the window no longer admits. */
  add(decided: readonly Signed[], nowMs: number): void {
    for (const s of decided) this.sentAt.set(s.signature.slice(0, 32), s.sentAtMs);
    // Send times are nearly in order (each client's are), so expired entries gather at the front.
    for (const [sig, at] of this.sentAt) {
      if (at >= nowMs - this.windowMs) break;
      this.sentAt.delete(sig);
    }
    if (this.sentAt.size > this.cap) this.forgetOldest();
  }

  /**
   * The oldest send times go, not the first added: a request stamped minutes ahead (the window
   * admits it) added early would raise the floor past the present, and every tenant's fresh
   * request would be refused as too old until then. A tenth of the cap more goes at once, so
   * the sort runs once per that many additions, not on each.
   */
  private forgetOldest(): void {
    const times = [...this.sentAt.values()].sort((a, b) => a - b);
    const drop = this.sentAt.size - this.cap + Math.floor(this.cap / 10);
    const newestDropped = times[drop - 1] ?? Number.NEGATIVE_INFINITY;
    this.floorMs = Math.max(this.floorMs, newestDropped);
    for (const [sig, at] of this.sentAt) if (at <= newestDropped) this.sentAt.delete(sig);
  }
}
