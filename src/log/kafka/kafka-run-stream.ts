/**
 * The per-run stream on Kafka. The runs topic is partitioned by run id, so a run is read from
 * the one partition that owns it, never from the whole topic.
 *
 * Kafka has no conditional append, so the check is made after the fact, the same way by every
 * reader (run-batch-fold.ts): a writer appends its batch tagged with the seq it expected, a
 * follower folds the runs partitions (headers only, no decoding) into each run's head, and the
 * append resolves once the fold has reached the batch and counted all of it; a batch that lost to
 * another writer's, in this process or any other, is ignored by every reader and its writer gets
 * `conflict`. An append that timed out and lands later, after a newer one, is ignored the same
 * way: a zombie writer cannot change a run.
 */
import { randomUUID } from 'node:crypto';
import type { RecordedEvent } from '../../domain/events.js';
import { TOPICS } from '../event-log.js';
import type { EventStore } from '../event-store.js';
import { checkStreamAppend, checkStreamRead, type RunStream, streamConflict } from '../run-stream.js';
import { withTimeout } from './kafka-error.js';
import type { KafkaLog } from './kafka-log.js';
import { LedgerFollower, type LedgerMessage } from './ledger-follower.js';
import { AFTER_HEADER, BATCH_HEADER, EMPTY_HEAD, foldRunRecord, type RunHead } from './run-batch-fold.js';

export interface KafkaRunStreamOptions {
  /** How long an append waits for the fold to reach its batch. Default 30 s. */
  readonly timeoutMs?: number;
}

export class KafkaRunStream implements RunStream {
  /** Every run's head as the fold of the runs topic has it so far. */
  private readonly heads = new Map<string, RunHead>();
  /** This writer's batches in flight: how many of their records the fold has counted. */
  private readonly mine = new Map<string, number>();
  /** Tells this writer's batches from any other's: randomness for identity only, never for a decision. */
  private readonly writer = randomUUID();
  private appends = 0;
  private follower: Promise<LedgerFollower> | undefined;
  private readonly timeoutMs: number;

  constructor(
    private readonly events: EventStore,
    private readonly log: KafkaLog,
    opts: KafkaRunStreamOptions = {},
  ) {
    this.timeoutMs = opts.timeoutMs ?? 30_000;
  }

  async read(runId: string, fromSeq: number): Promise<RecordedEvent[]> {
    checkStreamRead(runId, fromSeq);
    const out: RecordedEvent[] = [];
    let head = EMPTY_HEAD;
    for (const r of await this.log.readKey(TOPICS.runs, runId)) {
      const next = foldRunRecord(head, r.headers);
      if (next === null) continue;
      head = next;
      if (next.seq >= fromSeq)
        out.push(
          this.events.decodeKnown(TOPICS.runs, r.value) ?? (await this.events.decode(TOPICS.runs, r.value)),
        );
    }
    return out;
  }

  async append(runId: string, expectedSeq: number, events: readonly RecordedEvent[]): Promise<void> {
    checkStreamRead(runId, 1);
    checkStreamAppend(runId, expectedSeq, events);
    if (events.length === 0) return;
    const follower = await this.following();
    const known = this.heads.get(runId)?.seq ?? 0;
    // The fold may lag, but a head it has already passed is certainly taken.
    if (known > expectedSeq) throw streamConflict(runId, expectedSeq, known);
    const batch = `${this.writer}/${++this.appends}`;
    this.mine.set(batch, 0);
    try {
      const headers = { [AFTER_HEADER]: String(expectedSeq), [BATCH_HEADER]: batch };
      const offsets = await this.log.append(
        TOPICS.runs,
        events.map((e) => this.events.runRecord(e, headers)),
      );
      const partition = await this.log.partitionOfKey(TOPICS.runs, runId);
      const last = offsets.at(-1) as number;
      await withTimeout(follower.foldedTo(partition, last + 1), this.timeoutMs, `run ${runId}: append check`);
      if (this.mine.get(batch) !== events.length)
        throw streamConflict(runId, expectedSeq, this.heads.get(runId)?.seq ?? 0);
    } finally {
      this.mine.delete(batch);
    }
    await this.events.publishCopies(events);
  }

  async close(): Promise<void> {
    const follower = this.follower;
    this.follower = undefined;
    await (await follower?.catch(() => undefined))?.close();
  }

  private following(): Promise<LedgerFollower> {
    this.follower ??= this.log
      .prepare(TOPICS.runs)
      .then((info) => new LedgerFollower(this.log.kafka, info.name, info.partitions, (m) => this.fold(m)));
    const f = this.follower;
    f.catch(() => {
      if (this.follower === f) this.follower = undefined;
    });
    return f;
  }

  private fold(m: LedgerMessage): void {
    const next = foldRunRecord(this.heads.get(m.key) ?? EMPTY_HEAD, m.headers);
    if (next === null) return;
    this.heads.set(m.key, next);
    const counted = next.batch === null ? undefined : this.mine.get(next.batch);
    if (counted !== undefined && next.batch !== null) this.mine.set(next.batch, counted + 1);
  }
}
