import {
  type Command,
  ConflictError,
  cachedDiceSimilarity,
  DEFAULT_POLICY,
  type DeciderDeps,
  fieldsProblem,
  type Hashing,
  IllegalStateError,
  inputError,
  isTerminal,
  LoopguardError,
  nameProblem,
  type Policy,
  type PolicyOption,
  parsePolicy,
  resolvePolicy,
  resumeProblem,
  type Similarity,
  START_FIELDS,
} from '../domain/index.js';
import { DEFAULT_DATA_DIR, EmbeddedLog } from '../log/embedded/embedded-log.js';
import { SqliteLedger } from '../log/embedded/sqlite-ledger.js';
import { SqliteSchemaStore } from '../log/embedded/sqlite-schema-store.js';
import { EventStore } from '../log/event-store.js';
import type { RunLog } from '../log/run-log.js';
import {
  type Clock,
  type MachineScope,
  machineScope,
  RunActor,
  type RunInspector,
  systemClock,
} from '../machines/index.js';
import type { Ledger } from '../ports/ledger.js';
import type { LoadedRun, RunStream } from '../ports/run-stream.js';
import type { SchemaStore } from '../ports/schema-store.js';
import { GuardTelemetry } from '../telemetry/call-telemetry.js';
import type { CallTracing, GuardMetrics } from '../telemetry/guard-telemetry-ports.js';
import { GuardedRun } from './guarded-run.js';
import { LateEffects } from './late-effects.js';
import { nodeHashing } from './node-hashing.js';
import { RunFamily } from './run-family.js';
import { chooseSecretKey } from './secret-key.js';

export interface GuardPorts {
  /** The store port: a run's stream read from a seq, appended at an expected stream version. */
  readonly store: RunStream;
  readonly ledger: Ledger;
  /** A policy as in a policy file, or one parsed before: validated either way. */
  readonly policy?: PolicyOption;
  readonly clock?: Clock;
  readonly similarity?: Similarity;
  /** Key of the keyed hash of secret values (see chooseSecretKey). */
  readonly secretKey: string;
  /** Metrics of this guard's calls (`new LoopguardMetrics()` from `loopguard/metrics`, prom-client); none by default. */
  readonly metrics?: GuardMetrics;
  /** Where `execute_tool` spans go (`otelTracing()` from `loopguard/otel`, @opentelemetry/api); none by default. */
  readonly tracing?: CallTracing;
  /** Called when the guard is closed (the adapters it opened). */
  readonly onClose?: () => Promise<void>;
  /** An XState inspection observer: sees each transition of every run's machine (`@xstate.microstep` per event). */
  readonly inspect?: RunInspector;
}

/**
 * A run's start as `startRun` takes it. A `parentRunId` makes the run a sub-agent of a live run of
 * this guard: its steps, tokens and cost also count against every ancestor's budgets, and it ends
 * when an ancestor ends.
 */
export type StartRun = Pick<
  Extract<Command, { type: 'StartRun' }>,
  'runId' | 'taskType' | 'tenant' | 'progressVersion' | 'meta' | 'parentRunId'
>;

/** The library's entry point: runs, each behind its own actor, over one log and one ledger. */
export class Guard {
  private readonly runs = new Map<string, GuardedRun>();
  private readonly family = new RunFamily();
  private readonly deps: DeciderDeps;
  private readonly telemetry: GuardTelemetry;
  /** Where this guard's runs' machine is evaluated (and inspected). */
  private readonly machine: MachineScope;
  /** Its runs' side effects still running past their timeout. */
  private readonly late: LateEffects;
  readonly policy: Policy;

  constructor(private readonly ports: GuardPorts) {
    // Always parsed: an object that merely looks like a Policy may hold "explode" as a rule action
    // or leave a budget undefined, which would then never fire.
    const parsed = ports.policy === undefined ? null : parsePolicy(ports.policy);
    if (parsed !== null && !parsed.ok) throw parsed.error;
    this.policy = parsed === null ? DEFAULT_POLICY : parsed.value;
    this.deps = {
      hashing: nodeHashing(ports.secretKey),
      similarity: ports.similarity ?? cachedDiceSimilarity(),
    };
    this.telemetry = new GuardTelemetry({
      hashing: this.deps.hashing,
      metrics: ports.metrics,
      tracing: ports.tracing,
    });
    this.machine = machineScope(ports.inspect);
    this.late = new LateEffects();
  }

  /** How this guard hashes: fingerprints, and secret values under its key. */
  get hashing(): Hashing {
    return this.deps.hashing;
  }

  /** A run of this guard, rebuilt from what the log holds of it (nothing for a new one). */
  private guarded(
    runId: string,
    { events, snapshot }: LoadedRun = { snapshot: null, events: [] },
  ): GuardedRun {
    const clock = this.ports.clock ?? systemClock;
    return new GuardedRun(
      new RunActor(runId, this.deps, clock, events, snapshot, this.machine),
      this.ports.store,
      this.ports.ledger,
      this.deps.hashing,
      this.family,
      this.telemetry,
      this.late,
    );
  }

  private hold(run: GuardedRun): GuardedRun {
    this.runs.set(run.runId, run);
    this.family.add(run);
    return run;
  }

  /**
   * Starts a run: its first event is appended at seq 0, so a run id already in the log is refused
   * by the stream itself (no search of the log), also when another process started it meanwhile.
   */
  async startRun(opts: StartRun): Promise<GuardedRun> {
    if (typeof opts !== 'object' || opts === null)
      throw inputError('invalid_input', 'opts', 'expected an object');
    // The run id is the one field required.
    const badId = nameProblem(opts.runId);
    if (badId !== null) throw inputError('invalid_input', 'opts.runId', badId);
    const bad = fieldsProblem(opts, START_FIELDS, 'opts');
    if (bad !== null) throw inputError('invalid_input', bad.path, bad.problem);
    if (this.runs.has(opts.runId)) throw runExists(opts.runId);
    if (opts.parentRunId !== undefined) {
      const parent = this.runs.get(opts.parentRunId);
      if (parent === undefined)
        throw new LoopguardError(
          'unknown_parent',
          `parentRunId: run ${opts.parentRunId} is not a run this guard holds; start or resume it first`,
        );
      if (isTerminal(parent.state.status))
        throw new IllegalStateError(
          'parent_ended',
          `parentRunId: run ${opts.parentRunId} has ended (${parent.state.status}); a sub-agent cannot start under it`,
        );
    }
    const run = this.guarded(opts.runId);
    try {
      await run.start({ ...opts, type: 'StartRun', policy: resolvePolicy(this.policy, opts.taskType) });
    } catch (e) {
      if (e instanceof LoopguardError && e.code === 'conflict') throw runExists(opts.runId);
      throw e;
    }
    return this.hold(run);
  }

  /**
   * Rebuilds the run from the log and records an approved precondition change. Completed side
   * effects stay in the ledger, so redoing the plan returns them cached instead of running them.
   */
  async resume(
    runId: string,
    change: { preconditionChange: string; approvedBy?: string },
  ): Promise<GuardedRun> {
    // Checked before the run is loaded: a cut-off call would otherwise be recorded for nothing.
    const badId = nameProblem(runId);
    if (badId !== null) throw inputError('invalid_input', 'runId', badId);
    const bad = resumeProblem(change);
    if (bad !== null) throw inputError('invalid_input', bad.path, bad.problem);
    const run = this.runs.get(runId) ?? (await this.load(runId));
    if (run === undefined) throw new LoopguardError('unknown_run', `run ${runId} is not in the log`);
    // Refused before it is held: its family is read first.
    await this.loadFamily(run);
    this.hold(run);
    await run.resumeWith(change);
    return run;
  }

  /**
   * The family rules of a resumed run need its relatives, which a new process does not hold: its
   * ancestors (their budgets and whether they ended) and every run under its root (their spend
   * counts against the ancestors' budgets and its own). Those not held are loaded from the log into
   * the family only, not as runs of the guard (no call of theirs goes through it until they are
   * resumed themselves); the family ends them when an ancestor ends, as it ends held ones. They
   * count as the log has them now. A resume under an ended ancestor is refused as a start is:
   * none of its calls could execute.
   */
  private async loadFamily(run: GuardedRun): Promise<void> {
    let root = run.runId;
    const seen = new Set([root]);
    for (let p = run.state.parentRunId; p !== null && !seen.has(p); ) {
      seen.add(p);
      const a = this.family.member(p) ?? (await this.relative(p));
      // A parent the log lacks (a replayed trace may name one) has no budget or end to count.
      if (a === undefined) break;
      if (isTerminal(a.state.status))
        throw new IllegalStateError(
          'parent_ended',
          `run ${run.runId}: its ancestor run ${p} has ended (${a.state.status}); a sub-agent is not resumed under it`,
        );
      root = p;
      p = a.state.parentRunId;
    }
    const visited = new Set([root]);
    for (const queue = [root]; queue.length > 0; ) {
      for (const kid of await this.ports.store.childrenOf(queue.shift() as string)) {
        if (visited.has(kid)) continue;
        visited.add(kid);
        queue.push(kid);
        if (kid !== run.runId && this.family.member(kid) === undefined) await this.relative(kid);
      }
    }
  }

  /** A run rebuilt from the log, or undefined when the log has none of it. */
  private async load(runId: string): Promise<GuardedRun | undefined> {
    const loaded = await this.ports.store.load(runId);
    if (loaded.snapshot === null && loaded.events.length === 0) return undefined;
    return this.guarded(runId, loaded);
  }

  /** A relative of a resumed run, loaded from the log into the family only (see loadFamily). */
  private async relative(runId: string): Promise<GuardedRun | undefined> {
    const run = await this.load(runId);
    if (run !== undefined) this.family.add(run);
    return run;
  }

  /**
   * The metrics hook: this guard's metrics in the Prometheus text format, for an application's
   * `/metrics`. Refused (`missing_dependency`) on a guard created without `metrics`.
   */
  async metrics(): Promise<string> {
    if (!this.ports.metrics)
      throw new LoopguardError(
        'missing_dependency',
        "guard.metrics() needs createGuard({ metrics: new LoopguardMetrics() }) from 'loopguard/metrics' (npm install prom-client)",
      );
    return this.ports.metrics.text();
  }

  /** The live run, if this guard holds it. */
  run(runId: string): GuardedRun | undefined {
    return this.runs.get(runId);
  }

  /** Makes every run's held last result durable, then closes the adapters the guard opened. */
  async close(): Promise<void> {
    await Promise.all([...this.runs.values()].map((r) => r.close().catch(() => undefined)));
    this.runs.clear();
    await this.ports.ledger.close();
    await this.ports.onClose?.();
  }
}

const runExists = (runId: string): LoopguardError =>
  new ConflictError(
    'run_exists',
    `run ${runId} already exists; use guard.resume(${JSON.stringify(runId)}, ...) to continue it`,
  );

/** The options of `createGuard`: the guard's own (GuardPorts), and the adapters it opens. */
export interface CreateGuard
  extends Pick<GuardPorts, 'policy' | 'clock' | 'similarity' | 'metrics' | 'tracing' | 'inspect'> {
  /** Embedded data dir (default ./.loopguard). */
  readonly dataDir?: string;
  /** A log of your own (MemoryLog, KafkaLog); default: the embedded log in dataDir. It provides the runs' streams. */
  readonly log?: RunLog;
  readonly ledger?: Ledger;
  readonly schemaStore?: SchemaStore;
  /**
   * Key of the keyed hash of secret values; else LOOPGUARD_SECRET_KEY; else, on the embedded log,
   * a random key kept in the data dir. A log of your own (Kafka) needs one of the first two.
   */
  readonly secretKey?: string;
}

/** Opens the adapters (embedded by default) and returns a Guard over them. */
export async function createGuard(opts: CreateGuard = {}): Promise<Guard> {
  const { policy, dataDir: dir, log: given, ledger, schemaStore, secretKey, ...rest } = opts;
  const dataDir = dir ?? DEFAULT_DATA_DIR;
  // Everything that can be refused is checked before a file or a connection is opened.
  const parsed = policy === undefined ? null : parsePolicy(policy);
  if (parsed !== null && !parsed.ok) throw parsed.error;
  const key = chooseSecretKey(
    secretKey,
    given === undefined
      ? { kind: 'embedded', dataDir }
      : { kind: 'shared', where: 'createGuard({ log }) on a log of your own' },
  );
  const log = given ?? (await EmbeddedLog.open(dataDir));
  const events = await EventStore.create(log, schemaStore ?? new SqliteSchemaStore(dataDir));
  // Each log gives its own run stream: the embedded and in-memory ones load no Kafka module.
  const store = log.runStream(events);
  return new Guard({
    ...rest,
    store,
    ledger: ledger ?? SqliteLedger.open(dataDir),
    secretKey: key,
    policy: parsed?.value,
    onClose: async () => {
      await store.close();
      if (given === undefined) await log.close();
    },
  });
}
