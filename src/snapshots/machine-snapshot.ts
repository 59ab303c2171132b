/**
 * What every stored run snapshot holds, per run or per partition: the run machine's persisted
 * snapshot (its value the run's status, its context the run's state) with a format version.
 *
 * Format 1 is the bare RunState, upcast with its status as the machine's value. Snapshots are
 * stored apart (persistApart): the context where format 1 had it, so the release before the
 * version still reads a new record, and the rest beside it. A snapshot this version cannot
 * restore is refused with the reason: it is a cache, so its reader falls back on the log.
 */
import type { RunState } from '../domain/index.js';
import { type RunSnapshot, runMachine } from '../machines/index.js';

export { snapshotOf } from '../machines/index.js';

const SNAPSHOT_FORMAT = 2;

/** A stored snapshot: the machine's persisted snapshot and its format. */
export type StoredRunSnapshot = { readonly v: typeof SNAPSHOT_FORMAT } & ReturnType<
  typeof runMachine.getPersistedSnapshot
>;

/** A run snapshot that cannot be restored, and why. */
export interface Unrestorable {
  readonly problem: string;
}

export function persistRun(snapshot: RunSnapshot): StoredRunSnapshot {
  return { v: SNAPSHOT_FORMAT, ...runMachine.getPersistedSnapshot(snapshot) };
}

/**
 * The persisted snapshot apart: its context (the RunState format 1 stored) and the rest of it.
 * The rest is persisted over an empty context: XState's persist walks the whole context looking
 * for actors, and a run's state holds none.
 */
export function persistApart(snapshot: RunSnapshot): {
  readonly state: RunState;
  readonly rest: Omit<StoredRunSnapshot, 'context'>;
} {
  const bare = { ...snapshot, context: {} } as unknown as RunSnapshot;
  const { context: _, ...rest } = persistRun(bare) as StoredRunSnapshot & { readonly context?: unknown };
  return { state: snapshot.context, rest };
}

/**
 * The machine snapshot a stored state and the rest beside it restore to, or why none. No rest is
 * format 1; a rest that holds its own context (a snapshot stored whole) keeps it.
 */
export function restoreApart(state: unknown, rest: unknown): RunSnapshot | Unrestorable {
  if (rest === null || rest === undefined) return restoreRun(state);
  if (typeof rest !== 'object') return { problem: 'what is stored beside its state is not an object' };
  return restoreRun({ context: state, ...rest });
}

/** The machine snapshot `stored` (any format this version reads) restores to, or why none. */
export function restoreRun(stored: unknown): RunSnapshot | Unrestorable {
  if (typeof stored !== 'object' || stored === null) return { problem: 'it is not an object' };
  const s = stored as Record<string, unknown>;
  const [value, context] = s.v === undefined ? [s.status, s] : [s.value, s.context];
  if (s.v !== undefined && s.v !== SNAPSHOT_FORMAT)
    return { problem: `format ${String(s.v)} is not one this version reads (${SNAPSHOT_FORMAT})` };
  if (s.v !== undefined && s.status !== 'active') return { problem: `its status is ${String(s.status)}` };
  if (!isRunState(context)) return { problem: 'its context is not a run state' };
  if (context.status !== value) return { problem: `its value ${String(value)} is not its run's status` };
  try {
    return runMachine.resolveState({ value: value as string, context });
  } catch (e) {
    return { problem: (e as Error).message };
  }
}

export function isUnrestorable(r: RunSnapshot | Unrestorable): r is Unrestorable {
  return 'problem' in r;
}

function isRunState(v: unknown): v is RunState {
  if (typeof v !== 'object' || v === null) return false;
  const r = v as Record<string, unknown>;
  return typeof r.runId === 'string' && Number.isSafeInteger(r.seq) && typeof r.status === 'string';
}
