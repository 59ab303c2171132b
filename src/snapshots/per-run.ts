/**
 * The per-run strategy: a run's writer records the run's snapshot on the compacted
 * `loopguard.snapshots` topic (keyed by run id) with where that seq's record sits in the runs
 * topic, so loading the run reads the snapshot and the tail of its own partition after it.
 */
import type { Schema } from 'avsc';
import { isTerminal, type RunState } from '../domain/index.js';
import { RecordCodec } from '../events/record-codec.js';
import type { RunSnapshot } from '../machines/index.js';
import type { SchemaStore } from '../ports/schema-store.js';
import { isUnrestorable, persistApart, restoreApart } from './machine-snapshot.js';

/** At most this many events of a live run's tail to read after its newest snapshot. */
export const RUN_SNAPSHOT_EVERY = 16;

/**
 * Whether a writer whose last snapshot of the run was at `lastSeq` records one of `state`: its
 * first, then every RUN_SNAPSHOT_EVERY events, and every state of an ended run.
 */
export function runSnapshotDue(lastSeq: number | undefined, state: RunState): boolean {
  return lastSeq === undefined || isTerminal(state.status) || state.seq - lastSeq >= RUN_SNAPSHOT_EVERY;
}

export interface RunSnapshotRecord {
  readonly runId: string;
  readonly seq: number;
  readonly runsPartition: number;
  /** Offset in the runs partition of the record with this seq. */
  readonly runsOffset: number;
  /** Batch of that record (see run-batch-fold.ts), so the tail after it folds as the run's own does. */
  readonly batch: string | null;
  readonly snapshot: RunSnapshot;
}

const SCHEMA: Schema = {
  type: 'record',
  name: 'RunSnapshot',
  namespace: 'io.loopguard.snapshots',
  doc: 'A run snapshot at a seq; derived from loopguard.runs and rebuildable from it.',
  fields: [
    { name: 'runId', type: 'string' },
    { name: 'seq', type: 'long' },
    { name: 'runsPartition', type: 'int' },
    { name: 'runsOffset', type: 'long' },
    { name: 'batch', type: ['null', 'string'], default: null },
    {
      name: 'stateJson',
      type: 'string',
      doc: "The RunState as JSON: the context of the run machine's persisted snapshot.",
    },
    {
      name: 'snapshotJson',
      type: ['null', 'string'],
      default: null,
      doc: "The rest of the run machine's persisted snapshot as JSON (its value, status, format v); null before the format had a version.",
    },
  ],
};

type Wire = Omit<RunSnapshotRecord, 'snapshot'> & {
  readonly stateJson: string;
  readonly snapshotJson: string | null;
};

/**
 * Per-run snapshot records as bytes, and back (any format written so far). `stateJson` stays the
 * plain string holding the RunState that the release before the format's version reads (a null
 * or a union there makes its reader fail on the record).
 */
export class RunSnapshotCodec {
  private constructor(private readonly codec: RecordCodec<Wire>) {}

  static async create(store: SchemaStore, subject: string): Promise<RunSnapshotCodec> {
    return new RunSnapshotCodec(await RecordCodec.register<Wire>(store, subject, SCHEMA, 'bad_snapshot'));
  }

  encode(r: RunSnapshotRecord): Buffer {
    const { snapshot, ...at } = r;
    const { state, rest } = persistApart(snapshot);
    return this.codec.encode({ ...at, stateJson: JSON.stringify(state), snapshotJson: JSON.stringify(rest) });
  }

  /** Which run and seq a record is of, without restoring its snapshot. */
  async peek(buf: Buffer): Promise<{ readonly runId: string; readonly seq: number }> {
    const { runId, seq } = await this.codec.decode(buf);
    return { runId, seq };
  }

  /** The record, or why its snapshot cannot be restored (the caller reads the log instead). */
  async decode(buf: Buffer): Promise<RunSnapshotRecord | { readonly missing: string }> {
    const { stateJson, snapshotJson, ...at } = await this.codec.decode(buf);
    let stored: [unknown, unknown];
    try {
      stored = [JSON.parse(stateJson), JSON.parse(snapshotJson ?? 'null')];
    } catch {
      return { missing: `snapshot of ${at.runId} at seq ${at.seq} is not JSON` };
    }
    const snapshot = restoreApart(...stored);
    if (isUnrestorable(snapshot))
      return { missing: `snapshot of ${at.runId} at seq ${at.seq}: ${snapshot.problem}` };
    if (snapshot.context.runId !== at.runId || snapshot.context.seq !== at.seq)
      return {
        missing: `snapshot of ${at.runId} at seq ${at.seq} holds ${snapshot.context.runId} at ${snapshot.context.seq}`,
      };
    return { ...at, snapshot };
  }
}
