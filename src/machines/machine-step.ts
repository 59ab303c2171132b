import type { RecordedEvent, RunState } from '../domain/index.js';
import { ASSIGNMENTS, GUARDS, runMachine } from './run-machine.js';

/** One of the machine's transitions, compiled: its guard (none: always) and what it assigns. */
interface Compiled {
  readonly guard: ((s: RunState, rec: RecordedEvent) => boolean) | null;
  readonly assign: (s: RunState, rec: RecordedEvent) => RunState;
}

type Named = string | { readonly type: string; readonly params?: unknown };
const nameOf = (n: Named): { type: string; params: unknown } =>
  typeof n === 'string' ? { type: n, params: undefined } : { type: n.type, params: n.params };

/**
 * A transition of the machine's definition as plain functions. The machine has no entry, exit or
 * eventless transitions and no children, so taking a transition is its guard and its actions'
 * assignments in order; a move's target must be the status its `move` assigns (the snapshot's
 * value and the context's status are one), which is checked here, once, when the module loads.
 */
function compile(
  from: string,
  type: string,
  t: { guard?: unknown; actions: readonly unknown[]; target?: readonly { key: string }[] },
): Compiled {
  const where = `run machine: ${from} on ${type}`;
  let guard: Compiled['guard'] = null;
  if (t.guard !== undefined) {
    const g = nameOf(t.guard as Named);
    const fn = GUARDS[g.type as keyof typeof GUARDS] as
      | ((s: RunState, r: RecordedEvent, p: unknown) => boolean)
      | undefined;
    if (fn === undefined) throw new Error(`${where}: a guard ${g.type} that is not one of GUARDS`);
    guard = (s, r) => fn(s, r, g.params);
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
  return { guard, assign };
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
 * The machine's step without XState's interpreter: the transition its definition selects for the
 * run's status, the event's type and its guards (the first enabled, as XState selects), and that
 * transition's assignments. Null when the machine takes no transition (an illegal move). XState's
 * evaluation copies the whole context for each assignment and costs some 40 times the fold; a step
 * an observer inspects still goes through it (fold-run.ts), and a test holds the two equal.
 */
export function machineStep(s: RunState, record: RecordedEvent): RunState | null {
  const ts = TABLE.get(s.status)?.get(record.event.type);
  if (ts === undefined) return null;
  for (const t of ts) if (t.guard === null || t.guard(s, record)) return t.assign(s, record);
  return null;
}
