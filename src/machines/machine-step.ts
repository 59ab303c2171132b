import { initialState, patch, type RecordedEvent, type RunState, type RunStatus } from '../domain/index.js';
import { ASSIGNMENTS, GUARD_READS_STATE, GUARDS, runMachine } from './run-machine.js';

/** One of the machine's transitions, compiled: its guard (null: always), what it assigns, its target. */
interface Compiled {
  readonly guard: ((s: RunState, rec: RecordedEvent) => boolean) | null;
  readonly readsState: (rec: RecordedEvent) => boolean;
  readonly assign: (s: RunState, rec: RecordedEvent) => RunState;
  readonly to: RunStatus | null;
}

type Named = string | { readonly type: string; readonly params?: unknown };
const nameOf = (n: Named): { type: string; params: unknown } =>
  typeof n === 'string' ? { type: n, params: undefined } : { type: n.type, params: n.params };

/**
 * A transition of the machine's definition as plain functions. The machine has no entry, exit or
 * eventless transitions and no children, so taking a transition is its guard and its actions'
 * assignments in order; that a move's target is the status its `move` assigns is checked here,
 * once, when the module loads.
 */
function compile(
  from: string,
  type: string,
  t: { guard?: unknown; actions: readonly unknown[]; target?: readonly { key: string }[] },
): Compiled {
  const where = `run machine: ${from} on ${type}`;
  let guard: Compiled['guard'] = null;
  let readsState: Compiled['readsState'] = () => false;
  if (t.guard !== undefined) {
    const g = nameOf(t.guard as Named);
    const fn = GUARDS[g.type as keyof typeof GUARDS] as
      | ((s: RunState, r: RecordedEvent, p: unknown) => boolean)
      | undefined;
    if (fn === undefined) throw new Error(`${where}: a guard ${g.type} that is not one of GUARDS`);
    guard = (s, r) => fn(s, r, g.params);
    readsState = GUARD_READS_STATE[g.type as keyof typeof GUARDS];
  }
  const steps = t.actions.map((a) => {
    const { type: name, params } = nameOf(a as Named);
    const fn = ASSIGNMENTS[name as keyof typeof ASSIGNMENTS] as
      | ((s: RunState, r: RecordedEvent, p: unknown) => RunState)
      | undefined;
    if (fn === undefined) throw new Error(`${where}: an action ${name} that is not one of ASSIGNMENTS`);
    return { name, params, fn };
  });
  const target = t.target?.[0]?.key;
  if (target !== undefined && !steps.some((x) => x.name === 'move' && x.params === target))
    throw new Error(`${where}: goes to ${target} without moving the run's status there`);
  const [only] = steps;
  const assign =
    steps.length === 1 && only !== undefined
      ? (s: RunState, r: RecordedEvent) => only.fn(s, r, only.params)
      : (s: RunState, r: RecordedEvent) => steps.reduce((x, step) => step.fn(x, r, step.params), s);
  return { guard, readsState, assign, to: (target as RunStatus | undefined) ?? null };
}

/** Per state, per event type, the machine's transitions in the order XState tries them. */
const TABLE: ReadonlyMap<string, ReadonlyMap<string, readonly Compiled[]>> = new Map(
  Object.entries(runMachine.root.states).map(([value, node]) => [
    value,
    new Map(
      [...node.transitions.entries()].map(([type, ts]) => [type, ts.map((t) => compile(value, type, t))]),
    ),
  ]),
);

/**
 * The machine's step without XState's interpreter, which copies the whole context for each
 * assignment: the first enabled transition for the run's status and the event's type, as XState
 * selects it, and its assignments; null for an illegal move. A step an observer inspects still goes
 * through XState (fold-run.ts), and a test holds the two equal.
 */
export function machineStep(s: RunState, record: RecordedEvent): RunState | null {
  const ts = TABLE.get(s.status)?.get(record.event.type);
  if (ts === undefined) return null;
  for (const t of ts) if (t.guard === null || t.guard(s, record)) return t.assign(s, record);
  return null;
}

/** A run in each status and nothing else: what a guard that reads only the status is asked on. */
const STAND_INS: ReadonlyMap<string, RunState> = new Map(
  [...TABLE.keys()].map((status) => [status, patch(initialState(''), { status: status as RunStatus })]),
);

/**
 * The status the machine's step moves a run in `status` to on `record`, from the status alone, for
 * readers that keep runs' statuses without their states (the run list). Null where the guard may
 * read more than the status (GUARD_READS_STATE: a wait's end). A move the machine does not take
 * keeps the status, as every reader's fold does (fold-run.ts).
 */
export function statusStep(status: RunStatus, record: RecordedEvent): RunStatus | null {
  const ts = TABLE.get(status)?.get(record.event.type);
  if (ts === undefined) return status;
  const standIn = STAND_INS.get(status) as RunState;
  for (const t of ts) {
    if (t.guard !== null) {
      if (t.readsState(record)) return null;
      if (!t.guard(standIn, record)) continue;
    }
    return t.to ?? status;
  }
  return status;
}

/** Whether an event of `type` may move a run in `status`, whatever its guard says (else a keeper skips it). */
export const movesStatus = (status: RunStatus, type: string): boolean =>
  TABLE.get(status)
    ?.get(type)
    ?.some((t) => t.to !== null) ?? false;

/** The event types that may move a run in some status. */
export const STATUS_MOVING_TYPES: ReadonlySet<string> = new Set(
  [...TABLE.values()].flatMap((byType) =>
    [...byType.entries()].filter(([, ts]) => ts.some((t) => t.to !== null)).map(([type]) => type),
  ),
);
