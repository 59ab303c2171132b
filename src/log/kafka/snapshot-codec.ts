/**
 * The value of a `loopguard.snapshots` record: a run's state at a seq, with where that seq's
 * record sits in the runs topic (so a loader reads only the tail after it). Confluent-framed Avro
 * like every other value, registered under `<snapshots topic>-value`. The state itself is carried
 * as JSON: RunState is plain data by design, and a snapshot is a cache that can always be rebuilt
 * from the runs topic, so it needs no schema evolution of its own beyond this record's.
 */
import avsc, { type Resolver, type Type } from 'avsc';
import { LoopguardError } from '../../domain/errors.js';
import type { RunState } from '../../domain/run-state.js';
import { frame, unframe } from '../../events/wire.js';
import type { SchemaStore } from '../../ports/schema-store.js';

export interface RunSnapshot {
  readonly runId: string;
  readonly seq: number;
  readonly runsPartition: number;
  /** Offset in the runs partition of the record with this seq. */
  readonly runsOffset: number;
  /** Batch of that record (see run-batch-fold.ts), so the tail after it folds as the run's own does. */
  readonly batch: string | null;
  readonly state: RunState;
}

const SCHEMA: avsc.Schema = {
  type: 'record',
  name: 'RunSnapshot',
  namespace: 'io.loopguard.snapshots',
  doc: 'A run state at a seq; derived from loopguard.runs and rebuildable from it.',
  fields: [
    { name: 'runId', type: 'string' },
    { name: 'seq', type: 'long' },
    { name: 'runsPartition', type: 'int' },
    { name: 'runsOffset', type: 'long' },
    { name: 'batch', type: ['null', 'string'], default: null },
    { name: 'stateJson', type: 'string', doc: 'The RunState as JSON.' },
  ],
};

interface Wire {
  runId: string;
  seq: number;
  runsPartition: number;
  runsOffset: number;
  batch: string | null;
  stateJson: string;
}

export class SnapshotCodec {
  private readonly resolvers = new Map<number, Resolver>();

  private constructor(
    private readonly store: SchemaStore,
    private readonly type: Type,
    private readonly schemaId: number,
  ) {}

  static async create(store: SchemaStore, subject: string): Promise<SnapshotCodec> {
    const text = JSON.stringify(SCHEMA);
    return new SnapshotCodec(store, avsc.Type.forSchema(SCHEMA), await store.register(subject, text));
  }

  encode(s: RunSnapshot): Buffer {
    const wire: Wire = {
      runId: s.runId,
      seq: s.seq,
      runsPartition: s.runsPartition,
      runsOffset: s.runsOffset,
      batch: s.batch,
      stateJson: JSON.stringify(s.state),
    };
    return frame(this.schemaId, this.type.toBuffer(wire));
  }

  /** Which run and seq a snapshot is of, without parsing its state. */
  async peek(buf: Buffer): Promise<{ readonly runId: string; readonly seq: number }> {
    const { runId, seq } = await this.wire(buf);
    return { runId, seq };
  }

  async decode(buf: Buffer): Promise<RunSnapshot> {
    const wire = await this.wire(buf);
    let state: RunState;
    try {
      state = JSON.parse(wire.stateJson) as RunState;
    } catch (e) {
      throw new LoopguardError(
        'bad_snapshot',
        `snapshot of ${wire.runId} at seq ${wire.seq}: state is not JSON`,
        {
          cause: e,
        },
      );
    }
    return {
      runId: wire.runId,
      seq: wire.seq,
      runsPartition: wire.runsPartition,
      runsOffset: wire.runsOffset,
      batch: wire.batch,
      state,
    };
  }

  private async wire(buf: Buffer): Promise<Wire> {
    const { schemaId, body } = unframe(buf);
    if (schemaId === this.schemaId) return this.type.fromBuffer(body) as Wire;
    let resolver = this.resolvers.get(schemaId);
    if (resolver === undefined) {
      const writer = avsc.Type.forSchema(JSON.parse(await this.store.schemaById(schemaId)) as avsc.Schema);
      resolver = this.type.createResolver(writer);
      this.resolvers.set(schemaId, resolver);
    }
    return this.type.fromBuffer(body, resolver) as Wire;
  }
}
