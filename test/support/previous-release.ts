/**
 * How the release before the snapshot format's version (408ebf7) read snapshot records, taken from
 * its source, so a test can check that a record this version writes is still read by a worker or
 * CLI of that release during a rolling upgrade. Per run: its `SnapshotCodec` (schema registered
 * under the subject, a writer's schema resolved onto it through the store, `stateJson` parsed as
 * the RunState). Per partition: its check of a snapshot body (`isBody` in partition-snapshots.ts).
 */
import avsc from 'avsc';
import type { RunState } from '../../src/domain/run-state.js';
import { unframe } from '../../src/events/wire.js';
import type { SchemaStore } from '../../src/ports/schema-store.js';

/** `git show 408ebf7:src/log/kafka/snapshot-codec.ts`: its SCHEMA. */
export const PREVIOUS_RUN_SNAPSHOT_SCHEMA: avsc.Schema = {
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

/** The previous release's reader of per-run records on `subject` (its schema registered as it did). */
export async function previousRunSnapshotReader(
  store: SchemaStore,
  subject: string,
): Promise<
  (buf: Buffer) => Promise<{ readonly runId: string; readonly seq: number; readonly state: RunState }>
> {
  const type = avsc.Type.forSchema(PREVIOUS_RUN_SNAPSHOT_SCHEMA);
  const ownId = await store.register(subject, JSON.stringify(PREVIOUS_RUN_SNAPSHOT_SCHEMA));
  return async (buf) => {
    const { schemaId, body } = unframe(buf);
    const resolver =
      schemaId === ownId
        ? undefined
        : type.createResolver(
            avsc.Type.forSchema(JSON.parse(await store.schemaById(schemaId)) as avsc.Schema),
          );
    const wire = type.fromBuffer(body, resolver) as { runId: string; seq: number; stateJson: string };
    return { runId: wire.runId, seq: wire.seq, state: JSON.parse(wire.stateJson) as RunState };
  };
}

/**
 * The runs the previous release took from a partition snapshot's data, or null where it found
 * the body unreadable (it then folded the partition instead). Its check of the ended runs, whose
 * shape has not changed since, is left out.
 */
export function previousPartitionRuns(
  data: Buffer,
): { readonly runId: string; readonly state: RunState }[] | null {
  const b = JSON.parse(data.toString('utf8')) as { runs?: unknown; ended?: unknown };
  const held = (v: unknown): v is { runId: string; seq: number; state: RunState } => {
    const r = (v ?? {}) as Record<string, unknown>;
    return (
      typeof r.runId === 'string' &&
      Number.isSafeInteger(r.seq) &&
      (r.batch === null || typeof r.batch === 'string') &&
      typeof r.state === 'object' &&
      r.state !== null &&
      (r.state as RunState).seq === r.seq &&
      Array.isArray(r.answers)
    );
  };
  return Array.isArray(b.runs) && b.runs.every(held) && Array.isArray(b.ended) ? b.runs : null;
}
