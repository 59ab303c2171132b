/**
 * The per-partition strategy: a `serve` worker's snapshot of every run of a requests partition it
 * holds, on `loopguard.worker-snapshots`, so a worker that takes the partition over reads it and
 * the runs records after it, not the partition's history. Its place is kept in the offset
 * commit's metadata (snapshot-pointer.ts).
 *
 * A snapshot is the JSON of its runs, cut into pieces that each fit a Kafka record, keyed
 * group/partition/piece on a compacted topic. An ended run put aside is written as a snapshot of
 * that run alone (`runs_from` -1), and the partition's snapshot keeps only where it is.
 */
import { readFileSync } from 'node:fs';
import type { Schema } from 'avsc';
import type { RunState } from '../domain/index.js';
import { defaultSchemasDir } from '../events/envelope-schema.js';
import { RecordCodec } from '../events/record-codec.js';
import type { SchemaStore } from '../ports/schema-store.js';
import { isUnrestorable, persistApart, restoreApart, snapshotOf } from './machine-snapshot.js';
import type { SnapshotPointer } from './snapshot-pointer.js';

/** A run as its worker holds it: enough to go on deciding, and to answer a repeated request. */
export interface HeldRun<A = unknown> {
  readonly runId: string;
  readonly seq: number;
  /** The run-stream batch of its last record, for the fold of the tail (run-batch-fold.ts). */
  readonly batch: string | null;
  /** The run's state: the context of its machine snapshot. */
  readonly state: RunState;
  /** Its latest decisions, oldest first. */
  readonly answers: readonly A[];
  /** The hash of the request each answer was given to, by request id (absent in older snapshots). */
  readonly bodies?: Readonly<Record<string, string>>;
}

/** Where an ended run's own record is, with its head for the fold of a tail that revived it. */
export interface EndedRun extends Pick<HeldRun, 'runId' | 'seq' | 'batch'> {
  /** Where its own record is on the snapshots topic. */
  readonly at: SnapshotPointer;
}

export interface PartitionSnapshot<A = unknown> extends PartitionBody<A> {
  readonly id: string;
  /** Offset in the runs partition from which the tail is read; earlier records are in the states. */
  readonly runsFrom: number;
}

/** Well under the broker's default 1 MB record limit, with room for the framing. */
export const PIECE_BYTES = 512 * 1024;

/**
 * Whether a partition that wrote `sinceSnapshot` runs records since its last snapshot takes one
 * now: at least as many as the runs it holds, so a snapshot's cost is paid back by the tail it saves.
 */
export function partitionSnapshotDue(sinceSnapshot: number, everyRecords: number, heldRuns: number): boolean {
  return sinceSnapshot >= Math.max(everyRecords, heldRuns);
}

/** One piece as the Avro record `io.loopguard.service.PartitionSnapshot` has it. */
export interface SnapshotPiece {
  readonly group: string;
  readonly partition: number;
  readonly snapshot_id: string;
  readonly piece: number;
  readonly pieces: number;
  readonly runs_from: number;
  readonly data: Buffer;
}

/** A snapshot's runs and ended runs, whole. */
export interface PartitionBody<A = unknown> {
  readonly runs: readonly HeldRun<A>[];
  readonly ended: readonly EndedRun[];
}

/** Per-partition snapshot pieces as bytes, and a body back from its pieces (any format written so far). */
export class PartitionSnapshotCodec {
  private constructor(private readonly codec: RecordCodec<SnapshotPiece>) {}

  static async create(store: SchemaStore, subject: string): Promise<PartitionSnapshotCodec> {
    const text = readFileSync(`${defaultSchemasDir()}service/partition-snapshot.avsc`, 'utf8');
    return new PartitionSnapshotCodec(
      await RecordCodec.register<SnapshotPiece>(store, subject, JSON.parse(text) as Schema, 'bad_snapshot'),
    );
  }

  /**
   * `body` cut into encoded pieces, every one encoded before any is sent (a value the codec
   * refuses must not leave a transaction half written).
   */
  pieces(at: Omit<SnapshotPiece, 'piece' | 'pieces' | 'data'>, body: PartitionBody): Buffer[] {
    const stored = {
      // The state where the release before the format's version reads it, the rest beside it.
      runs: body.runs.map((run) => ({ ...run, snapshot: persistApart(snapshotOf(run.state)).rest })),
      ended: body.ended,
    };
    const data = Buffer.from(JSON.stringify(stored));
    const pieces = Math.max(1, Math.ceil(data.length / PIECE_BYTES));
    return Array.from({ length: pieces }, (_, piece) =>
      this.codec.encode({
        ...at,
        piece,
        pieces,
        data: data.subarray(piece * PIECE_BYTES, (piece + 1) * PIECE_BYTES),
      }),
    );
  }

  /** A piece, or null when it is not one (a cache skips what it cannot read). */
  piece(buf: Buffer): Promise<SnapshotPiece | null> {
    return this.codec.decode(buf).catch(() => null);
  }
}

/** The body the pieces' data make, in order, or why they make none. */
export function joinBody<A>(data: readonly Buffer[]): PartitionBody<A> | { readonly missing: string } {
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(data).toString('utf8'));
  } catch {
    return { missing: 'its data is not JSON' };
  }
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  if (!Array.isArray(b.runs) || !Array.isArray(b.ended) || !b.ended.every(isEndedRun))
    return { missing: 'its data is not a list of runs' };
  const runs: HeldRun<A>[] = [];
  for (const r of b.runs as Record<string, unknown>[]) {
    const run = heldRun<A>(r);
    if ('missing' in run) return run;
    runs.push(run);
  }
  return { runs, ended: b.ended };
}

/** A held run as stored: its state and the rest of its machine snapshot (format 1: none) restored. */
function heldRun<A>(r: Record<string, unknown>): HeldRun<A> | { readonly missing: string } {
  if (typeof r !== 'object' || r === null || typeof r.runId !== 'string')
    return { missing: 'a run has no id' };
  const { snapshot: stored, state, ...rest } = r;
  const snapshot = restoreApart(state, stored);
  if (isUnrestorable(snapshot)) return { missing: `run ${r.runId}: ${snapshot.problem}` };
  const ok =
    Number.isSafeInteger(r.seq) &&
    snapshot.context.seq === r.seq &&
    snapshot.context.runId === r.runId &&
    (r.batch === null || typeof r.batch === 'string') &&
    Array.isArray(r.answers);
  if (!ok) return { missing: `run ${r.runId}: its head or answers do not fit its snapshot` };
  return { ...(rest as unknown as Omit<HeldRun<A>, 'state'>), state: snapshot.context };
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
