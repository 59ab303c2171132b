/**
 * The per-run stream on Kafka. The runs topic is partitioned by run id, so a run is read from the
 * one partition that owns it.
 *
 * Kafka has no conditional append, so the check is made after the fact, the same way by every
 * reader (run-batch-fold.ts): a writer appends its batch tagged with the seq it expected, a
 * follower folds the runs partitions (headers only) into each run's head, and the append resolves
 * once the fold has counted all of the batch; a batch that lost to another writer's, or a zombie's
 * append that lands late, is ignored by every reader and its writer gets `conflict`.
 *
 * Usually the check needs no wait: when everything from the fold's position to the end of the new
 * batch is the writer's own (offsets from the ack), it folds them itself (own-records.ts).
 *
 * The writer appends to the runs topic only; KafkaCopyProjector derives the stops and ledger
 * copies. Loading a run reads its newest snapshot (`loopguard.snapshots`) and only its records
 * between that snapshot and the run's head as the fold knows it.
 */
import { randomUUID } from 'node:crypto';
import type { RecordedEvent } from '../../domain/events.js';
import type { RunState } from '../../domain/run-state.js';
import {
  type AppendToStreamOptions,
  type AppendToStreamResult,
  checkStreamAppend,
  checkStreamRead,
  type LoadedRun,
  type RunStream,
  streamConflict,
} from '../../ports/run-stream.js';
import { runSnapshotDue, snapshotOf } from '../../snapshots/index.js';
import { type StoredRecord, TOPICS } from '../event-log.js';
import { type EventStore, PARENT_HEADER } from '../event-store.js';
import { closedError } from '../log-errors.js';
import { withTimeout } from './kafka-error.js';
import type { KafkaLog } from './kafka-log.js';
import { OwnRecords, type PlacedHead } from './own-records.js';
import { type FollowedMessage, PartitionFollower } from './partition-follower.js';
import {
  AFTER_HEADER,
  BATCH_HEADER,
  EMPTY_HEAD,
  foldInto,
  foldRunRecord,
  RUN_HEADERS,
  type RunHead,
} from './run-batch-fold.js';
import { RunSnapshots } from './run-snapshots.js';

export interface KafkaRunStreamOptions {
  /** How long an append waits for the fold to reach its batch. Default 30 s. */
  readonly timeoutMs?: number;
}

export class KafkaRunStream implements RunStream {
  /** Every run's head as the fold of the runs topic has it so far. */
  private readonly heads = new Map<string, PlacedHead>();
  /** Sub-agents by parent run, from the starts the follower counted (PARENT_HEADER). */
  private readonly kids = new Map<string, string[]>();
  /** This writer's batches in flight: how many of their records the fold has counted. */
  private readonly mine = new Map<string, number>();
  /** This writer's acked records the fold has not passed yet. */
  private readonly own = new OwnRecords();
  /** Heads known from this writer's own records ahead of the fold (dropped once it passes them). */
  private readonly ahead = new Map<string, PlacedHead>();
  /** The seq of the last snapshot this writer recorded, per run. */
  private readonly snapshotted = new Map<string, number>();
  /** Tells this writer's batches from any other's: randomness for identity only, never for a decision. */
  private readonly writer = randomUUID();
  private appends = 0;
  private follower: Promise<PartitionFollower> | undefined;
  private snapshots: Promise<RunSnapshots> | undefined;
  private readonly timeoutMs: number;
  /** After close, nothing may start a follower again: its consumers would outlive the stream. */
  private closed = false;

  constructor(
    private readonly events: EventStore,
    private readonly log: KafkaLog,
    opts: KafkaRunStreamOptions = {},
  ) {
    this.timeoutMs = opts.timeoutMs ?? 30_000;
  }

  async readStream(runId: string, fromSeq = 1): Promise<RecordedEvent[]> {
    checkStreamRead(runId, fromSeq);
    return this.counted(await this.log.readKey(TOPICS.runs, runId), EMPTY_HEAD, fromSeq);
  }

  /**
   * Every partition of the runs topic with one consumer, the records folded by the batch rule as
   * `readStream` folds them. A run's records share a partition, read in offset order, so one head
   * per key is enough however the partitions interleave.
   */
  readAll(apply: (event: RecordedEvent) => void): Promise<number> {
    const heads = new Map<string, RunHead>();
    return this.log.scan(
      TOPICS.runs,
      (r) => {
        if (foldInto(heads, r.key, r.headers) === null) return;
        // Synchronous for every record whose schema is known: no promise per record.
        const known = this.events.decodeKnown(TOPICS.runs, r.value);
        if (known === undefined) return this.events.decode(TOPICS.runs, r.value).then(apply);
        apply(known);
      },
      { headers: RUN_HEADERS },
    );
  }

  /**
   * From the follower's fold of the runs topic's headers, up to every partition's end now: a
   * sub-agent's start names its parent in a header (PARENT_HEADER), so nothing is decoded. Starts
   * written before that header (2026-12-03) are not found.
   */
  async childrenOf(runId: string): Promise<readonly string[]> {
    checkStreamRead(runId, 1);
    const follower = await this.following();
    const ends = await this.log.partitionEnds(TOPICS.runs);
    await withTimeout(
      Promise.all(ends.map((o) => follower.foldedTo(o.partition, Number(o.high)))),
      this.timeoutMs,
      `run ${runId}: sub-agents`,
    );
    return [...(this.kids.get(runId) ?? [])].sort();
  }

  async load(runId: string): Promise<LoadedRun> {
    checkStreamRead(runId, 1);
    const follower = await this.following();
    const partition = await this.log.partitionOfKey(TOPICS.runs, runId);
    const end = (await this.log.partitionEnds(TOPICS.runs)).find((o) => o.partition === partition)?.high ?? 0;
    await withTimeout(follower.foldedTo(partition, end), this.timeoutMs, `run ${runId}: load`);
    const head = this.heads.get(runId);
    if (head === undefined) return { snapshot: null, events: [] };
    const snap = await (await this.snapshotting()).newestUpTo(runId, head.seq);
    if (snap === null) return { snapshot: null, events: await this.readStream(runId) };
    const tail = await this.log.readKey(TOPICS.runs, runId, {
      from: snap.runsOffset + 1,
      to: head.offset + 1,
    });
    return {
      snapshot: snap.snapshot.context,
      events: await this.counted(tail, { seq: snap.seq, batch: snap.batch }, 1),
    };
  }

  snapshot(state: RunState): void {
    const head = this.headOf(state.runId);
    // Only a state that is the run's counted head: anything else is a stream nobody reads.
    if (head === undefined || head.seq !== state.seq) return;
    // Only when the per-run strategy says it is due: the state grows, and the run's next append
    // would queue behind each snapshot's send.
    if (!runSnapshotDue(this.snapshotted.get(state.runId), state)) return;
    this.snapshotted.set(state.runId, state.seq);
    // Encoded and sent from the next turn of the event loop: a microtask would run inside the
    // guarded call that recorded the state, before its tool.
    const due = new Promise<void>((resolve) => setImmediate(resolve));
    void Promise.all([this.snapshotting(), this.log.partitionOfKey(TOPICS.runs, state.runId), due])
      .then(([snapshots, runsPartition]) => {
        // A newer snapshot of the run was asked for while this one waited: only the newest is sent.
        if (this.snapshotted.get(state.runId) !== state.seq) return;
        snapshots.write({
          runId: state.runId,
          seq: state.seq,
          runsPartition,
          runsOffset: head.offset,
          batch: head.batch,
          snapshot: snapshotOf(state),
        });
      })
      .catch(() => undefined);
  }

  async appendToStream(
    runId: string,
    events: readonly RecordedEvent[],
    { expectedStreamVersion: expectedSeq }: AppendToStreamOptions,
  ): Promise<AppendToStreamResult> {
    checkStreamAppend(runId, expectedSeq, events);
    if (events.length === 0) return { nextExpectedStreamVersion: expectedSeq };
    const follower = await this.following();
    const known = this.headOf(runId)?.seq ?? 0;
    // The fold may lag, but a head it has already passed is certainly taken.
    if (known > expectedSeq) throw streamConflict(runId, expectedSeq, known);
    const batch = `${this.writer}/${++this.appends}`;
    this.mine.set(batch, 0);
    try {
      const headers = { [AFTER_HEADER]: String(expectedSeq), [BATCH_HEADER]: batch };
      const records = events.map((e) => this.events.runRecord(e, headers));
      const [offsets, partition] = await Promise.all([
        this.log.append(TOPICS.runs, records),
        this.log.partitionOfKey(TOPICS.runs, runId),
      ]);
      const last = offsets.at(-1) as number;
      const headersOf = records.map((r) => r.headers ?? {});
      this.own.remember(partition, {
        from: offsets[0] as number,
        to: last + 1,
        key: runId,
        headers: headersOf,
      });
      const predicted = this.own.predict(
        partition,
        follower.position(partition),
        (key) => this.heads.get(key),
        batch,
        last,
      );
      if (predicted !== undefined) {
        const head = predicted.heads.get(runId) ?? this.heads.get(runId);
        // The fold may be in the middle of the batch: it counted the records below its position.
        const counted = (this.mine.get(batch) ?? 0) + predicted.counted;
        if (head === undefined || counted !== events.length)
          throw streamConflict(runId, expectedSeq, head?.seq ?? 0);
        this.ahead.set(runId, head);
        return { nextExpectedStreamVersion: expectedSeq + events.length };
      }
      await withTimeout(follower.foldedTo(partition, last + 1), this.timeoutMs, `run ${runId}: append check`);
      if (this.mine.get(batch) !== events.length)
        throw streamConflict(runId, expectedSeq, this.heads.get(runId)?.seq ?? 0);
    } finally {
      this.mine.delete(batch);
    }
    // The stops and ledger copies are derived from the runs topic by KafkaCopyProjector: a
    // writer that dies right here loses nothing.
    return { nextExpectedStreamVersion: expectedSeq + events.length };
  }

  /** Stops the follower and the snapshots' follow; an append check still waiting fails with log_closed. */
  async close(): Promise<void> {
    this.closed = true;
    const [follower, snapshots] = [this.follower, this.snapshots];
    this.follower = undefined;
    this.snapshots = undefined;
    await (await follower?.catch(() => undefined))?.close();
    await (await snapshots?.catch(() => undefined))?.close();
  }

  /** The run's head: the fold's, or this writer's own newer one that the fold has yet to reach. */
  private headOf(runId: string): PlacedHead | undefined {
    const folded = this.heads.get(runId);
    const mine = this.ahead.get(runId);
    if (mine === undefined) return folded;
    if (folded !== undefined && folded.offset >= mine.offset) {
      this.ahead.delete(runId);
      return folded;
    }
    return mine;
  }

  /** The records that count for the run, from `head` on, decoded from `fromSeq`. */
  private async counted(
    records: readonly StoredRecord[],
    head: RunHead,
    fromSeq: number,
  ): Promise<RecordedEvent[]> {
    const out: RecordedEvent[] = [];
    let at = head;
    for (const r of records) {
      const next = foldRunRecord(at, r.headers);
      if (next === null) continue;
      at = next;
      if (next.seq >= fromSeq)
        out.push(
          this.events.decodeKnown(TOPICS.runs, r.value) ?? (await this.events.decode(TOPICS.runs, r.value)),
        );
    }
    return out;
  }

  private snapshotting(): Promise<RunSnapshots> {
    if (this.closed) return Promise.reject(closedError());
    this.snapshots ??= RunSnapshots.open(this.events, this.log, this.timeoutMs);
    const s = this.snapshots;
    s.catch(() => {
      if (this.snapshots === s) this.snapshots = undefined;
    });
    return s;
  }

  private following(): Promise<PartitionFollower> {
    if (this.closed) return Promise.reject(closedError());
    this.follower ??= this.log
      .prepare(TOPICS.runs)
      .then((info) => new PartitionFollower(this.log.kafka, info.name, info.partitions, (m) => this.fold(m)));
    const f = this.follower;
    f.catch(() => {
      if (this.follower === f) this.follower = undefined;
    });
    return f;
  }

  private fold(m: FollowedMessage): void {
    const next = foldRunRecord(this.heads.get(m.key) ?? EMPTY_HEAD, m.headers);
    if (next === null) return;
    this.heads.set(m.key, { ...next, offset: m.offset });
    const parent = m.headers[PARENT_HEADER];
    if (parent !== undefined && next.seq === 1) {
      const kids = this.kids.get(parent) ?? [];
      if (!kids.includes(m.key)) kids.push(m.key);
      this.kids.set(parent, kids);
    }
    const mine = this.ahead.get(m.key);
    if (mine !== undefined && mine.offset <= m.offset) this.ahead.delete(m.key);
    const counted = next.batch === null ? undefined : this.mine.get(next.batch);
    if (counted !== undefined && next.batch !== null) this.mine.set(next.batch, counted + 1);
  }
}
