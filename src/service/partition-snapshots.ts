/**
 * Snapshots of a requests partition's runs on `loopguard.worker-snapshots`, so a worker that
 * takes a partition over reads the runs' states and the runs written after them, not the
 * partition's whole history.
 *
 * A snapshot is the JSON of every held run (state, head, latest answers), cut into pieces that
 * each fit a Kafka record; the pieces go out in the transaction of the batch they follow, each
 * in a send of its own (the broker limits a record batch, not only a record, to 1 MB by
 * default), and the returned pointer goes into that transaction's offset commit. The topic is
 * compacted on group/partition/piece: once a newer snapshot of a partition is committed, the
 * older one's pieces are garbage. A reader that finds a piece gone or unreadable gets null and
 * the caller folds the runs partition instead: a snapshot only ever saves work.
 *
 * A run that ended and has been idle for a while leaves the worker's memory and the partition's
 * snapshots: it is written once as a one-run record of its own (same schema, key
 * group/partition/ended/<run id>), and the snapshot keeps only where that record is. A long-lived
 * partition's snapshot then grows with its live runs and a small reference per ended one, not
 * with every state it ever held.
 */
import type { Transaction } from 'kafkajs';
import { UnavailableError } from '../domain/errors.js';
import type { RunState } from '../domain/run-state.js';
import type { KafkaLog } from '../log/kafka/kafka-log.js';
import { readRanges } from '../log/kafka/partition-reader.js';
import type { SchemaStore } from '../ports/schema-store.js';
import { SERVICE_SCHEMAS, ServiceCodec } from './service-codec.js';
import { SERVICE_TOPICS, type WireDecision } from './service-topics.js';
import type { SnapshotPointer } from './snapshot-pointer.js';

/** A run as its worker holds it: enough to go on deciding, and to answer a repeated request. */
export interface HeldRun {
  readonly runId: string;
  readonly seq: number;
  /** The run-stream batch of its last record, for the fold of the tail (run-batch-fold.ts). */
  readonly batch: string | null;
  readonly state: RunState;
  /** Its latest decisions, oldest first. */
  readonly answers: readonly WireDecision[];
  /** The hash of the request each answer was given to, by request id (absent in older snapshots). */
  readonly bodies?: Readonly<Record<string, string>>;
}

/** Where an ended run's own record is, with its head for the fold of a tail that revived it. */
export interface EndedRun {
  readonly runId: string;
  readonly seq: number;
  readonly batch: string | null;
  /** Where its own record is on the snapshots topic. */
  readonly at: SnapshotPointer;
}

export interface PartitionSnapshot {
  readonly id: string;
  /** Offset in the runs partition from which the tail is read; earlier records are in the states. */
  readonly runsFrom: number;
  readonly runs: readonly HeldRun[];
  readonly ended: readonly EndedRun[];
}

/** What a record's `data` holds, whole: the runs held and the ended runs put aside. */
interface SnapshotBody {
  readonly runs: readonly HeldRun[];
  readonly ended: readonly EndedRun[];
}

/** Well under the broker's default 1 MB record limit, with room for the framing. */
export const PIECE_BYTES = 512 * 1024;

interface WirePiece {
  readonly group: string;
  readonly partition: number;
  readonly snapshot_id: string;
  readonly piece: number;
  readonly pieces: number;
  readonly runs_from: number;
  readonly data: Buffer;
}

export class PartitionSnapshots {
  private constructor(
    private readonly log: KafkaLog,
    private readonly codec: ServiceCodec<WirePiece>,
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
    const codec = await ServiceCodec.create<WirePiece>(
      schemas,
      subjectFor(SERVICE_TOPICS.snapshots),
      SERVICE_SCHEMAS.partitionSnapshot,
    );
    return new PartitionSnapshots(log, codec, info.name, timeoutMs);
  }

  /** Sends `snapshot` in `txn`; the pointer is good once (and only if) `txn` commits. */
  write(
    txn: Transaction,
    group: string,
    partition: number,
    snapshot: PartitionSnapshot,
  ): Promise<SnapshotPointer> {
    const body: SnapshotBody = { runs: snapshot.runs, ended: snapshot.ended };
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
    const body: SnapshotBody = { runs: [run], ended: [] };
    const at = await this.send(
      txn,
      group,
      partition,
      id,
      -1,
      body,
      `${group}/${partition}/ended/${run.runId}`,
    );
    return { runId: run.runId, seq: run.seq, batch: run.batch, at };
  }

  /**
   * `body` cut into pieces, every piece encoded before the first is sent (a value the codec
   * refuses must not leave a transaction half written), each piece in a send of its own.
   */
  private async send(
    txn: Transaction,
    group: string,
    partition: number,
    id: string,
    runsFrom: number,
    body: SnapshotBody,
    key: string,
  ): Promise<SnapshotPointer> {
    const data = Buffer.from(JSON.stringify(body));
    const pieces = Math.max(1, Math.ceil(data.length / PIECE_BYTES));
    const values = Array.from({ length: pieces }, (_, piece) =>
      this.codec.encode({
        group,
        partition,
        snapshot_id: id,
        piece,
        pieces,
        runs_from: runsFrom,
        data: data.subarray(piece * PIECE_BYTES, (piece + 1) * PIECE_BYTES),
      }),
    );
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
        {},
      );
    return { id, from, to, pieces };
  }

  /** The ended run `ref` points at, or why it cannot be read. */
  async readEnded(
    ref: EndedRun,
    group: string,
    partition: number,
  ): Promise<HeldRun | { readonly missing: string }> {
    const read = await this.read(ref.at, group, partition);
    if ('missing' in read) return read;
    const run = read.runs[0];
    if (read.runs.length !== 1 || run?.runId !== ref.runId || run.seq !== ref.seq)
      return {
        missing: `the record at offsets ${ref.at.from}-${ref.at.to} is not run ${ref.runId} at seq ${ref.seq}`,
      };
    return run;
  }

  /** The snapshot `p` points at, or null with why when it cannot be read whole. */
  async read(
    p: SnapshotPointer,
    group: string,
    partition: number,
  ): Promise<PartitionSnapshot | { readonly missing: string }> {
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
      if (m.message.value === null) continue;
      const w = await this.codec.decode(m.message.value).catch(() => null);
      if (w === null || w.snapshot_id !== p.id || w.group !== group || w.partition !== partition) continue;
      if (w.pieces !== p.pieces || w.piece < 0 || w.piece >= p.pieces) continue;
      pieces[w.piece] = w.data;
      runsFrom = w.runs_from;
    }
    const gone = pieces.indexOf(undefined);
    if (gone !== -1) return { missing: `piece ${gone} of ${p.pieces} is not in offsets ${p.from}-${p.to}` };
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(pieces as Buffer[]).toString('utf8'));
    } catch {
      return { missing: 'its data is not JSON' };
    }
    if (!isBody(body)) return { missing: 'its data is not a list of runs' };
    return { id: p.id, runsFrom, runs: body.runs, ended: body.ended };
  }
}

function isBody(v: unknown): v is SnapshotBody {
  if (typeof v !== 'object' || v === null) return false;
  const b = v as Record<string, unknown>;
  return (
    Array.isArray(b.runs) && b.runs.every(isHeldRun) && Array.isArray(b.ended) && b.ended.every(isEndedRun)
  );
}

function isEndedRun(v: unknown): v is EndedRun {
  if (typeof v !== 'object' || v === null) return false;
  const r = v as Record<string, unknown>;
  const at = r.at as Record<string, unknown> | null | undefined;
  return (
    typeof r.runId === 'string' &&
    Number.isSafeInteger(r.seq) &&
    (r.batch === null || typeof r.batch === 'string') &&
    typeof at === 'object' &&
    at !== null &&
    typeof at.id === 'string' &&
    Number.isSafeInteger(at.from) &&
    Number.isSafeInteger(at.to) &&
    Number.isSafeInteger(at.pieces)
  );
}

function isHeldRun(v: unknown): v is HeldRun {
  if (typeof v !== 'object' || v === null) return false;
  const r = v as Record<string, unknown>;
  return (
    typeof r.runId === 'string' &&
    Number.isSafeInteger(r.seq) &&
    (r.batch === null || typeof r.batch === 'string') &&
    typeof r.state === 'object' &&
    r.state !== null &&
    (r.state as RunState).seq === r.seq &&
    Array.isArray(r.answers)
  );
}
