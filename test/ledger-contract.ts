/**
 * The Ledger port's contract, run against every adapter: MemoryLedger and SqliteLedger (unit), KafkaLedger (int).
 * `make` returns two ledger instances over one store, as two workers would have.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Ledger } from '../src/ports/ledger.js';

export interface LedgerPair {
  readonly a: Ledger;
  readonly b: Ledger;
  readonly close: () => Promise<void>;
}

const own = (callId: string, runId = 'run-1') => ({ runId, callId });

export function ledgerContract(name: string, make: () => Promise<LedgerPair>, timeout = 30_000): void {
  describe(`Ledger contract: ${name}`, () => {
    const open: LedgerPair[] = [];
    const pair = async () => {
      const p = await make();
      open.push(p);
      return p;
    };
    afterEach(async () => {
      for (const p of open.splice(0)) await p.close();
    });

    it('lets exactly one of many concurrent claimants win', { timeout }, async () => {
      const { a, b } = await pair();
      const got = await Promise.all(
        Array.from({ length: 8 }, (_, i) => (i % 2 ? a : b).claim('k-race', own(`c${i}`))),
      );
      expect(got.filter((g) => g.status === 'won')).toHaveLength(1);
      expect(got.filter((g) => g.status === 'in_flight')).toHaveLength(7);
    });

    it('returns a completed result to every later claimant, on any instance', { timeout }, async () => {
      const { a, b } = await pair();
      expect(await a.claim('k-done', own('c1'))).toEqual({ status: 'won' });
      await a.complete('k-done', own('c1'), '{"paid":30}');
      expect(await b.claim('k-done', own('c2'))).toEqual({ status: 'completed', resultJson: '{"paid":30}' });
      expect(await b.get('k-done')).toMatchObject({ status: 'completed', owner: own('c1') });
    });

    it('frees a released key for the next claimant', { timeout }, async () => {
      const { a, b } = await pair();
      await a.claim('k-rel', own('c1'));
      await a.release('k-rel', own('c1'));
      expect(await a.get('k-rel')).toBeUndefined();
      expect(await b.claim('k-rel', own('c2', 'run-2'))).toEqual({ status: 'won' });
    });

    it('keeps an in-doubt key from running until it is settled', { timeout }, async () => {
      const { a, b } = await pair();
      await a.claim('k-doubt', own('c1'));
      await a.markInDoubt('k-doubt', own('c1'), 'timeout');
      expect(await b.claim('k-doubt', own('c2'))).toMatchObject({ status: 'in_doubt', owner: own('c1') });
      await b.settle('k-doubt', false);
      expect(await a.claim('k-doubt', own('c3'))).toEqual({ status: 'won' });
      await a.markInDoubt('k-doubt', own('c3'), 'timeout');
      await b.settle('k-doubt', true, '"done"');
      expect(await a.claim('k-doubt', own('c4'))).toEqual({ status: 'completed', resultJson: '"done"' });
    });

    it('never frees a completed key, whoever settles or releases it', { timeout }, async () => {
      const { a, b } = await pair();
      await a.claim('k-final', own('c1'));
      await a.complete('k-final', own('c1'), '1');
      await b.settle('k-final', false);
      await expect(b.release('k-final', own('c1'))).rejects.toMatchObject({ code: 'not_claim_owner' });
      expect(await b.get('k-final')).toMatchObject({ status: 'completed', resultJson: '1' });
    });

    it('refuses to settle a live claim, whose side effect may be running', { timeout }, async () => {
      const { a, b } = await pair();
      await a.claim('k-live', own('c1'));
      for (const happened of [false, true])
        await expect(b.settle('k-live', happened, '"paid"')).rejects.toMatchObject({
          code: 'settle_refused',
        });
      // Still the holder's: no other claimant may run it, and its own outcome still lands.
      expect(await b.claim('k-live', own('c2', 'run-2'))).toMatchObject({
        status: 'in_flight',
        owner: own('c1'),
      });
      await a.complete('k-live', own('c1'), '"paid"');
      expect(await b.get('k-live')).toMatchObject({ status: 'completed', resultJson: '"paid"' });
      // Nothing to settle is no refusal.
      await b.settle('k-none', false);
      expect(await b.get('k-none')).toBeUndefined();
    });

    it('refuses a verdict about one holder once another holds the key', { timeout }, async () => {
      const { a, b } = await pair();
      await a.claim('k-about', own('c1'));
      await a.markInDoubt('k-about', own('c1'), 'timeout');
      await b.settle('k-about', false, undefined, own('c1'));
      await a.claim('k-about', own('c2'));
      await a.markInDoubt('k-about', own('c2'), 'timeout');
      // A late "did not happen" about c1's attempt says nothing of c2's.
      await expect(b.settle('k-about', false, undefined, own('c1'))).rejects.toMatchObject({
        code: 'settle_refused',
      });
      expect(await b.get('k-about')).toMatchObject({ status: 'in_doubt', owner: own('c2') });
      await b.settle('k-about', true, '"paid"', own('c2'));
      expect(await b.get('k-about')).toMatchObject({ status: 'completed', resultJson: '"paid"' });
    });

    it('refuses an outcome from anyone but the claimant', { timeout }, async () => {
      const { a, b } = await pair();
      await a.claim('k-own', own('c1'));
      await expect(b.complete('k-own', own('c9'), '1')).rejects.toMatchObject({ code: 'not_claim_owner' });
      expect(await a.get('k-own')).toMatchObject({ status: 'claimed', owner: own('c1') });
    });

    it('lets exactly one of concurrent reissues onto one new key through', { timeout }, async () => {
      const { a, b } = await pair();
      await a.claim('k-paid', own('c1'));
      await a.complete('k-paid', own('c1'), '"p-1"');
      const notes = Array.from({ length: 6 }, (_, i) => ({
        oldKey: 'k-paid',
        newKey: 'k-again',
        reason: `operator ${i}`,
        approvedBy: `ops-${i}`,
        by: own(`reissue-${i}`, `run-${i}`),
      }));
      const got = await Promise.allSettled(notes.map((n, i) => (i % 2 ? a : b).reissue(n)));
      const won = notes.filter((_, i) => got[i]?.status === 'fulfilled');
      expect(won).toHaveLength(1);
      for (const g of got.filter((x) => x.status === 'rejected'))
        expect((g as PromiseRejectedResult).reason).toMatchObject({ code: 'reissue_refused' });
      expect(await a.reissuedFrom('k-again')).toEqual(won[0]);
      expect(await b.reissuedFrom('k-again')).toEqual(won[0]);
    });

    it('records a reissue with its reason and keeps the old entry', { timeout }, async () => {
      const { a, b } = await pair();
      const note = {
        oldKey: 'k-old',
        newKey: 'k-new',
        reason: 'customer asked twice',
        approvedBy: 'ops',
        by: own('r'),
      };
      await expect(a.reissue(note)).rejects.toMatchObject({ code: 'reissue_refused' });
      await a.claim('k-old', own('c1'));
      await a.complete('k-old', own('c1'), '"p-1"');
      await expect(a.reissue({ ...note, reason: ' ' })).rejects.toMatchObject({ code: 'reissue_refused' });
      await a.reissue(note);
      await expect(b.reissue(note)).rejects.toMatchObject({ code: 'reissue_refused' });
      expect(await b.reissuedFrom('k-new')).toEqual(note);
      expect(await b.get('k-old')).toMatchObject({ status: 'completed', resultJson: '"p-1"' });
      expect(await b.claim('k-new', own('c2'))).toEqual({ status: 'won' });
    });
  });
}
