/**
 * The idempotency ledger on Kafka: claims are serialised through the ledger topic partition of
 * their operation key. A claimant appends its claim, waits until its follower has folded that
 * partition up to the claim, and reads the verdict off the fold: the first unreleased claim wins,
 * a completion is final, a claim older than the lease with no outcome is in doubt (its owner may
 * have died mid-call; nobody re-runs it blindly).
 *
 * Records are the event store's RecordedEvents (Operation*, runId/callId = owner) keyed by
 * operation key; the copy projector's copies of a run's outcomes fold in too, its late copies of
 * claims do not. Reissue notes are keyed `reissue:<newKey>`, so compacting the new key keeps them.
 */
import { randomUUID } from 'node:crypto';
import { ConflictError, IllegalStateError } from '../../domain/errors.js';
import type { DomainEvent, RecordedEvent } from '../../domain/events.js';
import {
  foldLedger,
  holderRefusal,
  type KeyEntry,
  operationKeyOf,
  sameOwner,
} from '../../domain/ledger-rules.js';
import { EventCodec } from '../../events/codec.js';
import type { ClaimOutcome, ClaimOwner, Ledger, LedgerState, ReissueNote } from '../../ports/ledger.js';
import { reissueRefusal, settleRefusal } from '../../ports/ledger.js';
import type { SchemaStore } from '../../ports/schema-store.js';
import { TOPICS } from '../event-log.js';
import { SOURCE_HEADER } from '../event-store.js';
import { notClaimOwner } from '../log-errors.js';
import { withTimeout } from './kafka-error.js';
import type { KafkaLog } from './kafka-log.js';
import {
  type FollowedMessage,
  type PartitionFollower as Follower,
  PartitionFollower,
} from './partition-follower.js';
import { fetchTopicOffsets } from './topic-registry.js';

export interface KafkaLedgerOptions {
  /** The log whose ledger topic (same prefix/suffix) holds the claims. */
  readonly log: KafkaLog;
  readonly schemaStore: SchemaStore;
  /** Registry subject for the ledger records; default `loopguard.ledger-value`. */
  readonly subject?: string;
  /** A claim with no outcome this long after it was made is in doubt. Default 240 s (2 x the default step timeout). */
  readonly leaseMs?: number;
  /** How long a claim or read waits for the fold. Default 30 s. */
  readonly timeoutMs?: number;
  readonly clock?: { now(): number };
}

const NOTE_HEADER = 'loopguard.reissue';

export class KafkaLedger implements Ledger {
  private readonly entries = new Map<string, KeyEntry>();
  private readonly notes = new Map<string, ReissueNote>();
  private readonly leaseMs: number;
  private readonly timeoutMs: number;
  private readonly clock: { now(): number };
  private follower: Follower | undefined;

  private constructor(
    private readonly log: KafkaLog,
    private readonly codec: EventCodec,
    private readonly topic: { name: string; partitions: number },
    opts: KafkaLedgerOptions,
  ) {
    this.leaseMs = opts.leaseMs ?? 240_000;
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.clock = opts.clock ?? { now: () => Date.now() };
  }

  static async open(opts: KafkaLedgerOptions): Promise<KafkaLedger> {
    const topic = await opts.log.prepare(TOPICS.ledger);
    const codec = await EventCodec.create(opts.schemaStore, opts.subject ?? `${TOPICS.ledger}-value`);
    const ledger = new KafkaLedger(opts.log, codec, topic, opts);
    ledger.follower = new PartitionFollower(opts.log.kafka, topic.name, topic.partitions, (m) =>
      ledger.fold(m),
    );
    return ledger;
  }

  async claim(key: string, owner: ClaimOwner): Promise<ClaimOutcome> {
    // A claim that lost to a holder who released after it is simply made again.
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await this.write(key, owner, { type: 'OperationClaimed', ...opOf(key, owner) });
      } catch (err) {
        // The claim may be in the topic without an answer to its caller, who will not run the
        // tool; withdraw it, or it would hold the key until the lease runs out. A release from a
        // claim that lost is ignored by the fold, so this cannot free someone else's claim.
        const reason = 'claim withdrawn: the ledger did not answer in time';
        const withdraw = this.append(key, owner, { type: 'OperationReleased', ...opOf(key, owner), reason });
        await withdraw.catch(() => undefined);
        throw err;
      }
      const e = this.entries.get(key);
      if (e === undefined) continue;
      if (e.status === 'completed') return { status: 'completed', resultJson: e.resultJson };
      if (e.status === 'in_doubt') return { status: 'in_doubt', owner: e.owner };
      // Its own claim, made again: a worker deciding a request again after its batch aborted, so
      // the decision it made then was never seen and nothing ran; however long ago (a retry after
      // a long outage), it is not in doubt.
      if (sameOwner(e.owner, owner)) return { status: 'won' };
      return this.expired(e)
        ? { status: 'in_doubt', owner: e.owner }
        : { status: 'in_flight', owner: e.owner };
    }
    throw new ConflictError('ledger_contended', `ledger: ${key} kept changing hands; try again`, {});
  }

  async complete(key: string, owner: ClaimOwner, resultJson: string): Promise<void> {
    await this.owned(key, owner);
    await this.write(key, owner, { type: 'OperationCompleted', ...opOf(key, owner), resultJson });
  }

  async markInDoubt(key: string, owner: ClaimOwner, reason: string): Promise<void> {
    await this.owned(key, owner);
    await this.write(key, owner, { type: 'OperationInDoubt', ...opOf(key, owner), reason });
  }

  async release(key: string, owner: ClaimOwner): Promise<void> {
    await this.owned(key, owner);
    const reason = 'released by its claimant: the side effect did not run';
    await this.write(key, owner, { type: 'OperationReleased', ...opOf(key, owner), reason });
  }

  async settle(key: string, happened: boolean, resultJson = 'null', about?: ClaimOwner): Promise<void> {
    const refused = settleRefusal(key, await this.get(key), about);
    if (refused !== null) throw new IllegalStateError('settle_refused', `ledger: ${refused}`);
    // A late outcome of the holder and this settle meet in one partition, in order: after a
    // completion the settle changes nothing (a completion is final).
    const e = this.entries.get(key);
    if (e === undefined || e.status === 'completed') return;
    const op = opOf(key, e.owner);
    await this.write(
      key,
      e.owner,
      happened
        ? { type: 'OperationCompleted', ...op, resultJson }
        : { type: 'OperationReleased', ...op, reason: 'settled: it did not happen' },
    );
  }

  async get(key: string): Promise<LedgerState | undefined> {
    await this.caughtUp();
    const e = this.entries.get(key);
    if (e?.status !== 'claimed') return e;
    return this.expired(e)
      ? { status: 'in_doubt', owner: e.owner, reason: 'no outcome within the lease' }
      : { status: 'claimed', owner: e.owner };
  }

  async reissue(note: ReissueNote): Promise<void> {
    const refused = reissueRefusal(
      note,
      await this.get(note.oldKey),
      (await this.get(note.newKey)) ?? this.notes.get(note.newKey),
    );
    if (refused !== null) throw new IllegalStateError('reissue_refused', `reissue: ${refused}`);
    // The check above and the write below are not one step: notes onto one new key share a
    // partition, the fold keeps the first, and whoever finds another's note first has lost.
    await this.writeNote(note);
    const first = this.notes.get(note.newKey);
    if (first === undefined || sameOwner(first.by, note.by)) return;
    // Compaction keeps a key's last record: the winner's note goes back on top of this one.
    await this.writeNote(first).catch(() => undefined);
    throw new IllegalStateError(
      'reissue_refused',
      `reissue: operation key ${note.newKey} was reissued onto by ${first.by.runId}/${first.by.callId} at the same moment`,
    );
  }

  private writeNote(note: ReissueNote): Promise<void> {
    const event: DomainEvent = {
      type: 'OperationReleased',
      operationKey: note.newKey,
      callId: note.by.callId,
      reason: `reissue of ${note.oldKey}: ${note.reason}`,
    };
    return this.write(`reissue:${note.newKey}`, note.by, event, { [NOTE_HEADER]: JSON.stringify(note) });
  }

  async reissuedFrom(newKey: string): Promise<ReissueNote | undefined> {
    await this.caughtUp();
    return this.notes.get(newKey);
  }

  async close(): Promise<void> {
    await this.follower?.close();
  }

  private expired(e: KeyEntry): boolean {
    return e.status === 'claimed' && this.clock.now() - e.atMs >= this.leaseMs;
  }

  private async owned(key: string, owner: ClaimOwner): Promise<void> {
    let e = this.entries.get(key);
    if (e === undefined) {
      await this.caughtUp();
      e = this.entries.get(key);
    }
    const refused = holderRefusal(e, owner);
    if (refused !== null) throw notClaimOwner(key, owner, refused);
  }

  /** Appends one record and waits until the fold has taken it: read-your-writes for this key. */
  private async write(
    key: string,
    owner: ClaimOwner,
    event: DomainEvent,
    headers: Record<string, string> = {},
  ): Promise<void> {
    const partition = await this.log.partitionOfKey(TOPICS.ledger, key);
    const offset = await this.append(key, owner, event, headers);
    await this.waitFor(partition, offset + 1);
  }

  private async append(
    key: string,
    owner: ClaimOwner,
    event: DomainEvent,
    headers: Record<string, string> = {},
  ): Promise<number> {
    const rec: RecordedEvent = {
      eventId: `ledger/${randomUUID()}`,
      runId: owner.runId,
      seq: 0,
      atMs: this.clock.now(),
      event,
    };
    const [offset] = await this.log.append(TOPICS.ledger, [
      { key, value: this.codec.encode(rec), headers: { 'loopguard.type': event.type, ...headers } },
    ]);
    return offset ?? 0;
  }

  private async caughtUp(): Promise<void> {
    const admin = this.log.kafka.admin();
    await admin.connect();
    try {
      const ends = await withTimeout(
        fetchTopicOffsets(admin, this.topic.name),
        this.timeoutMs,
        'ledger offsets',
      );
      await Promise.all(ends.map((o) => this.waitFor(o.partition, Number(o.high))));
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
  }

  private waitFor(partition: number, offset: number): Promise<void> {
    if (this.follower === undefined) throw new IllegalStateError('ledger_closed', 'ledger: not open');
    return withTimeout(this.follower.foldedTo(partition, offset), this.timeoutMs, 'ledger fold');
  }

  private async fold(m: FollowedMessage): Promise<void> {
    // A projector's copy of a run's claim repeats, late (the projector lags), what the claimant
    // wrote here itself: folded, it could take back a key released meanwhile. Copies of outcomes
    // stay (only the holder's apply), so an outcome the ledger missed still reaches it.
    if (m.headers[SOURCE_HEADER] !== undefined && m.headers['loopguard.type'] === 'OperationClaimed') return;
    const rec = await this.codec.decode(m.value).catch(() => null);
    if (rec === null) return; // not a ledger record; the DLQ consumer reports those
    const note = m.headers[NOTE_HEADER];
    if (note !== undefined) {
      const parsed = JSON.parse(note) as ReissueNote;
      // The first note onto a key is the reissue; a later one lost a race (see reissue).
      if (!this.notes.has(parsed.newKey)) this.notes.set(parsed.newKey, parsed);
      return;
    }
    const key = operationKeyOf(rec);
    if (key === null) return;
    const prev = this.entries.get(key);
    const next = foldLedger(prev, rec);
    if (next === undefined) this.entries.delete(key);
    // The lease runs on this process's clock from when it first saw the claim: the claimant's
    // stamp is another clock, and one minutes slow made every claim it took look expired here (in
    // doubt, so a reconcile settled a charge that was running). Seen late (a restart reading the
    // topic), a claim only expires later than it would have: it waits, never runs twice.
    else if (next.status === 'claimed' && next !== prev)
      this.entries.set(key, { ...next, atMs: this.clock.now() });
    else this.entries.set(key, next);
  }
}

/** The operation fields of a ledger event about `key`, held by `owner`. */
function opOf(key: string, owner: ClaimOwner): { operationKey: string; callId: string } {
  return { operationKey: key, callId: owner.callId };
}
