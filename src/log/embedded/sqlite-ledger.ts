/**
 * The embedded ledger: the `ledger` table of the data dir's database, keyed by operation key, so a
 * claim is one INSERT and exactly one process wins it. Every other step applies the ledger rules
 * (domain/ledger-rules.ts) in one write transaction. A claim whose owning process died without an
 * outcome reads as in doubt, never as free (the row keeps the claimant's pid; one machine).
 */
import type { StatementSync } from 'node:sqlite';
import { applyLedgerFact, IllegalStateError, type KeyEntry, type LedgerFact } from '../../domain/index.js';
import {
  type ClaimOutcome,
  type ClaimOwner,
  type Ledger,
  type LedgerState,
  type ReissueNote,
  reissueRefusal,
  settleRefusal,
} from '../../ports/ledger.js';
import { notClaimOwner } from '../log-errors.js';
import { EmbeddedDatabase, processAlive } from './database.js';
import { DEFAULT_DATA_DIR } from './embedded-log.js';

interface LedgerRow {
  status: 'claimed' | 'completed' | 'in_doubt';
  run_id: string;
  call_id: string;
  pid: number;
  result_json: string | null;
  reason: string | null;
  at_ms: number;
}

const DEAD_OWNER = 'owner process ended without recording a result';

export class SqliteLedger implements Ledger {
  private readonly sql: Record<'claim' | 'get' | 'put' | 'drop' | 'note' | 'addNote', StatementSync>;

  private constructor(private readonly store: EmbeddedDatabase) {
    const db = store.db;
    this.sql = {
      claim: db.prepare(
        `INSERT INTO ledger (operation_key, status, run_id, call_id, pid, at_ms) VALUES (?, 'claimed', ?, ?, ?, ?) ON CONFLICT (operation_key) DO NOTHING`,
      ),
      get: db.prepare('SELECT * FROM ledger WHERE operation_key = ?'),
      put: db.prepare(
        'UPDATE ledger SET status = ?, run_id = ?, call_id = ?, result_json = ?, reason = ? WHERE operation_key = ?',
      ),
      drop: db.prepare('DELETE FROM ledger WHERE operation_key = ?'),
      note: db.prepare('SELECT note FROM reissues WHERE new_key = ?'),
      addNote: db.prepare('INSERT INTO reissues (new_key, old_key, note) VALUES (?, ?, ?)'),
    };
  }

  /** The ledger of the data dir's database (created if needed). */
  static open(
    dataDir: string = DEFAULT_DATA_DIR,
    opts: { readonly fsync?: 'batch' | 'none'; readonly busyTimeoutMs?: number } = {},
  ): SqliteLedger {
    return new SqliteLedger(EmbeddedDatabase.open(dataDir, opts));
  }

  async claim(key: string, owner: ClaimOwner): Promise<ClaimOutcome> {
    const { won, row } = await this.store.write(() => {
      const r = this.sql.claim.run(key, owner.runId, owner.callId, process.pid, Date.now());
      return { won: r.changes === 1, row: r.changes === 1 ? undefined : this.row(key) };
    });
    if (won || row === undefined) return { status: 'won' };
    const s = stateOf(row);
    if (s.status === 'completed') return { status: 'completed', resultJson: s.resultJson };
    return { status: s.status === 'claimed' ? 'in_flight' : 'in_doubt', owner: s.owner };
  }

  complete(key: string, owner: ClaimOwner, resultJson: string): Promise<void> {
    return this.apply(key, owner, { type: 'OperationCompleted', resultJson });
  }

  markInDoubt(key: string, owner: ClaimOwner, reason: string): Promise<void> {
    return this.apply(key, owner, { type: 'OperationInDoubt', reason });
  }

  release(key: string, owner: ClaimOwner): Promise<void> {
    return this.apply(key, owner, { type: 'OperationReleased' });
  }

  async settle(key: string, happened: boolean, resultJson = 'null', about?: ClaimOwner): Promise<void> {
    await this.store.write(() => {
      const row = this.row(key);
      const state = row === undefined ? undefined : stateOf(row);
      const refused = settleRefusal(key, state, about);
      if (refused !== null) throw new IllegalStateError('settle_refused', `ledger: ${refused}`);
      // A completion is final: settling never frees a side effect that is known to have happened.
      if (row === undefined || row.status === 'completed') return;
      if (!happened) this.sql.drop.run(key);
      else this.sql.put.run('completed', row.run_id, row.call_id, resultJson, null, key);
    });
  }

  async get(key: string): Promise<LedgerState | undefined> {
    const row = this.store.read(() => this.row(key));
    return row === undefined ? undefined : stateOf(row);
  }

  async reissue(note: ReissueNote): Promise<void> {
    // One transaction: of two operators reissuing onto one key, the second sees the first's note.
    await this.store.write(() => {
      const old = this.row(note.oldKey);
      const taken = this.row(note.newKey);
      const refused = reissueRefusal(
        note,
        old === undefined ? undefined : stateOf(old),
        taken === undefined ? this.noteOf(note.newKey) : stateOf(taken),
      );
      if (refused !== null) throw new IllegalStateError('reissue_refused', `reissue: ${refused}`);
      this.sql.addNote.run(note.newKey, note.oldKey, JSON.stringify(note));
    });
  }

  async reissuedFrom(newKey: string): Promise<ReissueNote | undefined> {
    return this.store.read(() => this.noteOf(newKey));
  }

  async close(): Promise<void> {
    this.store.close();
  }

  private row(key: string): LedgerRow | undefined {
    return this.sql.get.get(key) as LedgerRow | undefined;
  }

  private noteOf(newKey: string): ReissueNote | undefined {
    const r = this.sql.note.get(newKey) as { note: string } | undefined;
    return r === undefined ? undefined : (JSON.parse(r.note) as ReissueNote);
  }

  /** The ledger rules decide; this only stores their answer (or refuses as they say). */
  private async apply(key: string, owner: ClaimOwner, fact: LedgerFact): Promise<void> {
    await this.store.write(() => {
      const row = this.row(key);
      const step = applyLedgerFact(row === undefined ? undefined : entryOf(row), fact, owner, Date.now());
      if (step.refused !== null) throw notClaimOwner(key, owner, step.refused);
      const next = step.next;
      if (next === undefined) this.sql.drop.run(key);
      else {
        const result = next.status === 'completed' ? next.resultJson : null;
        const reason = next.status === 'in_doubt' ? next.reason : null;
        this.sql.put.run(next.status, next.owner.runId, next.owner.callId, result, reason, key);
      }
    });
  }
}

function entryOf(r: LedgerRow): KeyEntry {
  const owner = { runId: r.run_id, callId: r.call_id };
  if (r.status === 'completed') return { status: 'completed', owner, resultJson: r.result_json ?? 'null' };
  if (r.status === 'in_doubt') return { status: 'in_doubt', owner, reason: r.reason ?? '' };
  return { status: 'claimed', owner, atMs: r.at_ms };
}

function stateOf(r: LedgerRow): LedgerState {
  const e = entryOf(r);
  if (e.status === 'claimed')
    return processAlive(r.pid)
      ? { status: 'claimed', owner: e.owner }
      : { status: 'in_doubt', owner: e.owner, reason: DEAD_OWNER };
  return e;
}
