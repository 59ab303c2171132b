/**
 * The snapshot module's contract: a stored run snapshot is the run machine's persisted snapshot
 * and restores to the same machine snapshot through either strategy's records, snapshots written
 * in the format before the version (a bare RunState) are read as the machine snapshot they stand
 * for, and what cannot be restored is refused with the reason (its reader then reads the log).
 */
import avsc from 'avsc';
import { describe, expect, it } from 'vitest';
import { initialState, type RunState } from '../src/domain/run-state.js';
import { MemorySchemaStore } from '../src/events/memory-schema-store.js';
import { frame, unframe } from '../src/events/wire.js';
import { runMachine } from '../src/machines/index.js';
import {
  isUnrestorable,
  joinBody,
  PartitionSnapshotCodec,
  PIECE_BYTES,
  partitionSnapshotDue,
  persistApart,
  persistRun,
  RUN_SNAPSHOT_EVERY,
  RunSnapshotCodec,
  restoreRun,
  runSnapshotDue,
  type SnapshotPiece,
  type StoredRunSnapshot,
  snapshotOf,
} from '../src/snapshots/index.js';
import {
  PREVIOUS_RUN_SNAPSHOT_SCHEMA,
  previousPartitionRuns,
  previousRunSnapshotReader,
} from './support/previous-release.js';
import { foldEvents, runEvents } from './support/run-events.js';

/** A run that started, waited and stopped (seq 8). */
const stopped = foldEvents(initialState('r'), runEvents('r', 0, 8));
const running = foldEvents(initialState('r'), runEvents('r', 0, 2));

describe('a stored run snapshot', () => {
  it("is the machine's persisted snapshot, and restores to the same machine snapshot", () => {
    for (const state of [running, stopped]) {
      const snapshot = snapshotOf(state);
      const stored = JSON.parse(JSON.stringify(persistRun(snapshot)));
      expect(stored).toMatchObject({ v: 2, status: 'active', value: state.status, context: state });
      const restored = restoreRun(stored);
      if (isUnrestorable(restored)) throw new Error(restored.problem);
      expect(restored.value).toBe(state.status);
      expect(restored.context).toEqual(state);
      expect(JSON.parse(JSON.stringify(runMachine.getPersistedSnapshot(restored)))).toEqual(
        JSON.parse(JSON.stringify(runMachine.getPersistedSnapshot(snapshot))),
      );
    }
  });

  it("stored apart, is the machine's persisted snapshot: its context, and the rest as XState persists it", () => {
    for (const state of [running, stopped]) {
      const snapshot = snapshotOf(state);
      const { context, ...whole } = persistRun(snapshot) as StoredRunSnapshot & { context: unknown };
      const apart = persistApart(snapshot);
      expect(apart.state).toBe(state);
      expect(context).toEqual(state);
      expect(JSON.parse(JSON.stringify(apart.rest))).toEqual(JSON.parse(JSON.stringify(whole)));
      expect(Object.keys(apart.rest).sort()).toEqual(Object.keys(whole).sort());
    }
  });

  it('reads the format before the version, a bare RunState, as the machine snapshot it stands for', () => {
    const restored = restoreRun(JSON.parse(JSON.stringify(stopped)));
    if (isUnrestorable(restored)) throw new Error(restored.problem);
    expect(restored.value).toBe(stopped.status);
    expect(restored.context).toEqual(stopped);
  });

  it.each([
    ['a newer format', { ...persistRun(snapshotOf(running)), v: 3 }, /format 3/],
    [
      'a value that is not its run status',
      { ...persistRun(snapshotOf(running)), value: 'WAITING' },
      /not its run/,
    ],
    ['a state the machine does not have', { ...running, status: 'PAUSED' }, /PAUSED/],
    ['no run state', { v: 2, status: 'active', value: 'RUNNING', context: { seq: 1 } }, /not a run state/],
    ['not an object', 'RUNNING', /not an object/],
  ])('refuses %s, saying why', (_, stored, why) => {
    const r = restoreRun(stored);
    expect(isUnrestorable(r) ? r.problem : 'restored').toMatch(why);
  });
});

describe('the per-run strategy', () => {
  it('is due for a run first state, then every RUN_SNAPSHOT_EVERY events, and for every ended state', () => {
    const at = (seq: number, status: RunState['status'] = 'RUNNING') => ({ ...running, seq, status });
    expect(runSnapshotDue(undefined, at(1))).toBe(true);
    expect(runSnapshotDue(1, at(RUN_SNAPSHOT_EVERY))).toBe(false);
    expect(runSnapshotDue(1, at(RUN_SNAPSHOT_EVERY + 1))).toBe(true);
    expect(runSnapshotDue(5, at(6, 'STOPPED_LOOP_GUARD'))).toBe(true);
  });

  it('round-trips a record, and reads one written with the schema before the version', async () => {
    const store = new MemorySchemaStore();
    const subject = 'loopguard.snapshots-value';
    // The record as writers before the version wrote it: its state as JSON in `stateJson`.
    const old = avsc.Type.forSchema(PREVIOUS_RUN_SNAPSHOT_SCHEMA);
    const oldId = await store.register(subject, JSON.stringify(old.schema()));
    const codec = await RunSnapshotCodec.create(store, subject);
    const at = { runId: 'r', seq: stopped.seq, runsPartition: 2, runsOffset: 41, batch: 'w/3' };

    const read = await codec.decode(codec.encode({ ...at, snapshot: snapshotOf(stopped) }));
    if ('missing' in read) throw new Error(read.missing);
    expect({ ...read, snapshot: undefined }).toEqual({ ...at, snapshot: undefined });
    expect(read.snapshot.value).toBe('STOPPED_LOOP_GUARD');
    expect(read.snapshot.context).toEqual(stopped);

    const written = frame(oldId, old.toBuffer({ ...at, stateJson: JSON.stringify(stopped) }));
    expect(await codec.peek(written)).toEqual({ runId: 'r', seq: stopped.seq });
    const upcast = await codec.decode(written);
    if ('missing' in upcast) throw new Error(upcast.missing);
    expect(upcast.snapshot.value).toBe('STOPPED_LOOP_GUARD');
    expect(upcast.snapshot.context).toEqual(stopped);

    // A snapshot of another seq than its record's is not used.
    const wrong = await codec.decode(
      frame(oldId, old.toBuffer({ ...at, seq: 3, stateJson: JSON.stringify(stopped) })),
    );
    expect(wrong).toMatchObject({ missing: expect.stringContaining('holds r at 8') });
  });
});

describe('the per-run strategy, read by the release before the format had a version', () => {
  it('gets the run state it read from stateJson, the rest of the machine snapshot beside it', async () => {
    const store = new MemorySchemaStore();
    const subject = 'loopguard.snapshots-value';
    // An older worker is up first, with its schema; this version's writer registers beside it.
    const previous = await previousRunSnapshotReader(store, subject);
    const codec = await RunSnapshotCodec.create(store, subject);
    const at = { runId: 'r', seq: stopped.seq, runsPartition: 0, runsOffset: 7, batch: null };
    const written = codec.encode({ ...at, snapshot: snapshotOf(stopped) });

    expect(await previous(written)).toEqual({ runId: 'r', seq: stopped.seq, state: stopped });
    // The context is stored once: the rest of the persisted snapshot is beside it, without it.
    const { context, ...rest } = persistRun(snapshotOf(stopped)) as StoredRunSnapshot & { context: unknown };
    const { schemaId, body } = unframe(written);
    const wire = avsc.Type.forSchema(JSON.parse(await store.schemaById(schemaId)) as avsc.Schema);
    expect(wire.fromBuffer(body)).toMatchObject({
      stateJson: JSON.stringify(context),
      snapshotJson: JSON.stringify(rest),
    });
    const read = await codec.decode(written);
    if ('missing' in read) throw new Error(read.missing);
    expect(runMachine.getPersistedSnapshot(read.snapshot)).toEqual(
      runMachine.getPersistedSnapshot(snapshotOf(stopped)),
    );
  });
});

describe('the per-partition strategy', () => {
  it('is due once the partition wrote as many runs records as the larger of its cadence and its runs', () => {
    expect(partitionSnapshotDue(999, 1000, 10)).toBe(false);
    expect(partitionSnapshotDue(1000, 1000, 10)).toBe(true);
    expect(partitionSnapshotDue(1000, 1000, 1001)).toBe(false);
  });

  it('cuts a body into pieces and joins them back into the same machine snapshots', async () => {
    const codec = await PartitionSnapshotCodec.create(
      new MemorySchemaStore(),
      'loopguard.worker-snapshots-value',
    );
    // Enough runs for several pieces.
    const runs = Array.from({ length: 400 }, (_, i) => {
      const state = foldEvents(initialState(`run-${i}`), runEvents(`run-${i}`, 0, 2 + (i % 9)));
      return {
        runId: state.runId,
        seq: state.seq,
        batch: `b-${i}`,
        state,
        answers: [{ n: i }],
        bodies: { x: 'y' },
      };
    });
    const ended = [{ runId: 'gone', seq: 4, batch: null, at: { id: 's0', from: 1, to: 1, pieces: 1 } }];
    const at = { group: 'g', partition: 3, snapshot_id: 's1', runs_from: 77 };
    const values = codec.pieces(at, { runs, ended });
    const pieces = (await Promise.all(values.map((v) => codec.piece(v)))) as SnapshotPiece[];
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.every((p) => p.data.length <= PIECE_BYTES)).toBe(true);
    expect(pieces.map((p) => ({ ...p, data: undefined }))).toEqual(
      pieces.map((_, piece) => ({ ...at, piece, pieces: pieces.length, data: undefined })),
    );
    const stored = JSON.parse(Buffer.concat(pieces.map((p) => p.data)).toString('utf8'));
    // Each run's state where the release before the version reads it, the rest of its snapshot beside it.
    expect(stored.runs[0]).toMatchObject({
      state: runs[0]?.state,
      snapshot: { v: 2, status: 'active', value: runs[0]?.state.status },
    });
    expect(stored.runs[0].snapshot.context).toBeUndefined();
    expect(joinBody(pieces.map((p) => p.data))).toEqual({ runs, ended });
    expect(
      previousPartitionRuns(Buffer.concat(pieces.map((p) => p.data)))?.map(({ runId, state }) => ({
        runId,
        state,
      })),
    ).toEqual(runs.map(({ runId, state }) => ({ runId, state })));
  });

  it('reads a body written before the version (each run its state) and refuses one it cannot restore', () => {
    const run = { runId: 'r', seq: stopped.seq, batch: null, state: stopped, answers: [] };
    expect(joinBody([Buffer.from(JSON.stringify({ runs: [run], ended: [] }))])).toEqual({
      runs: [run],
      ended: [],
    });
    // Written whole (its context inside), as this version did before storing it apart.
    const whole = { ...run, state: undefined, snapshot: persistRun(snapshotOf(stopped)) };
    expect(joinBody([Buffer.from(JSON.stringify({ runs: [whole], ended: [] }))])).toEqual({
      runs: [run],
      ended: [],
    });
    const newer = { ...run, state: undefined, snapshot: { ...persistRun(snapshotOf(stopped)), v: 3 } };
    expect(joinBody([Buffer.from(JSON.stringify({ runs: [newer], ended: [] }))])).toMatchObject({
      missing: expect.stringContaining('format 3'),
    });
    expect(joinBody([Buffer.from(JSON.stringify({ runs: [{ ...run, seq: 2 }], ended: [] }))])).toHaveProperty(
      'missing',
    );
    expect(joinBody([Buffer.from('{"runs":')])).toEqual({ missing: 'its data is not JSON' });
  });
});
