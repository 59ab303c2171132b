/**
 * The per-partition snapshot strategy (src/snapshots/per-partition.ts) on
 * `loopguard.worker-snapshots`: a snapshot's pieces go out in the transaction of the batch they
 * follow, each in a send of its own (the broker limits a record batch, not only a record, to 1 MB
 * by default), and its pointer goes into that transaction's offset commit. The topic is compacted
 * on group/partition/piece, so a newer snapshot makes the older one's pieces garbage. A piece gone
 * or unreadable gives the reason instead of a snapshot: the caller folds the runs partition.
 */
import type { Transaction } from 'kafkajs';
import { UnavailableError } from '../domain/errors.js';
import type { KafkaLog } from '../log/kafka/kafka-log.js';
import { readRanges } from '../log/kafka/partition-reader.js';
import type { SchemaStore } from '../ports/schema-store.js';
import {
  type EndedRun as AnyEndedRun,
  type HeldRun as AnyHeldRun,
  type PartitionSnapshot as AnyPartitionSnapshot,
  joinBody,
  type PartitionBody,
  PartitionSnapshotCodec,
  type SnapshotPointer,
} from '../snapshots/index.js';
import { SERVICE_TOPICS, type WireDecision } from './service-topics.js';

/** A run as a worker holds it, with its latest decisions. */
export type HeldRun = AnyHeldRun<WireDecision>;
export type EndedRun = AnyEndedRun;
export type PartitionSnapshot = AnyPartitionSnapshot<WireDecision>;

type Missing = { readonly missing: string };

export class PartitionSnapshots {
  private constructor(
    private readonly log: KafkaLog,
    private readonly codec: PartitionSnapshotCodec,
    private readonly topic: string,
    private readonly timeoutMs: number,
  ) {}

  static async open(
    log: KafkaLog,
    schemas: SchemaStore,
    subjectFor: (topic: string) => string,
    timeoutMs: number,
  ): Promise<PartitionSnapshots> {
    const info = await log.prepare(SERVICE_TOPICS.snapshots);
    const codec = await PartitionSnapshotCodec.create(schemas, subjectFor(SERVICE_TOPICS.snapshots));
    return new PartitionSnapshots(log, codec, info.name, timeoutMs);
  }

  /** Sends `snapshot` in `txn`; the pointer is good once (and only if) `txn` commits. */
  write(
    txn: Transaction,
    group: string,
    partition: number,
    snapshot: PartitionSnapshot,
  ): Promise<SnapshotPointer> {
    const body = { runs: snapshot.runs, ended: snapshot.ended };
    return this.send(txn, group, partition, snapshot.id, snapshot.runsFrom, body, `${group}/${partition}`);
  }

  /** Puts an ended run aside in `txn`, as a snapshot of that run alone; where it is. */
  async writeEnded(
    txn: Transaction,
    group: string,
    partition: number,
    id: string,
    run: HeldRun,
  ): Promise<EndedRun> {
    const key = `${group}/${partition}/ended/${run.runId}`;
    const at = await this.send(txn, group, partition, id, -1, { runs: [run], ended: [] }, key);
    return { runId: run.runId, seq: run.seq, batch: run.batch, at };
  }

  /** `body`'s pieces, each in a send of its own. */
  private async send(
    txn: Transaction,
    group: string,
    partition: number,
    id: string,
    runsFrom: number,
    body: PartitionBody,
    key: string,
  ): Promise<SnapshotPointer> {
    const values = this.codec.pieces({ group, partition, snapshot_id: id, runs_from: runsFrom }, body);
    const offsets: number[] = [];
    for (const [piece, value] of values.entries()) {
      const [sent] = await txn.send({
        topic: this.topic,
        acks: -1,
        messages: [{ key: `${key}/${piece}`, value, partition: 0 }],
      });
      offsets.push(Number(sent?.baseOffset ?? Number.NaN));
    }
    const [from, to] = [offsets[0] as number, offsets.at(-1) as number];
    if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to))
      throw new UnavailableError(
        'log_unavailable',
        `snapshot ${key}: the broker returned no offset for a piece`,
      );
    return { id, from, to, pieces: values.length };
  }

  /**
   * The ended run `ref` points at, or null when its record cannot be read (the caller loads the
   * run from its stream instead: slower, never a fresh run).
   */
  async readEnded(ref: EndedRun, group: string, partition: number): Promise<HeldRun | null> {
    const read = await this.read(ref.at, group, partition);
    if ('missing' in read || read.runs.length !== 1) return null;
    const [run] = read.runs;
    return run?.runId === ref.runId && run.seq === ref.seq ? run : null;
  }

  /** The snapshot `p` points at, or why it cannot be read whole. */
  async read(p: SnapshotPointer, group: string, partition: number): Promise<PartitionSnapshot | Missing> {
    const low = (await this.log.partitionEnds(SERVICE_TOPICS.snapshots))[0]?.low ?? 0;
    if (p.from < low)
      return { missing: `its first piece (offset ${p.from}) is below the topic's start ${low}` };
    const found = await readRanges(
      this.log.kafka,
      this.topic,
      [{ partition: 0, from: p.from, to: p.to + 1 }],
      this.timeoutMs,
    );
    const pieces: (Buffer | undefined)[] = Array.from({ length: p.pieces });
    let runsFrom = -1;
    for (const m of found) {
      const w = m.message.value === null ? null : await this.codec.piece(m.message.value);
      if (w === null || w.snapshot_id !== p.id || w.group !== group || w.partition !== partition) continue;
      if (w.pieces !== p.pieces || w.piece < 0 || w.piece >= p.pieces) continue;
      pieces[w.piece] = w.data;
      runsFrom = w.runs_from;
    }
    const gone = pieces.indexOf(undefined);
    if (gone !== -1) return { missing: `piece ${gone} of ${p.pieces} is not in offsets ${p.from}-${p.to}` };
    const body = joinBody<WireDecision>(pieces as Buffer[]);
    return 'missing' in body ? body : { id: p.id, runsFrom, runs: body.runs, ended: body.ended };
  }
}
