import { join } from 'node:path';
import type { Tracer } from '@opentelemetry/api';
import {
  DEFAULT_POLICY,
  type DeciderDeps,
  diceSimilarity,
  isTerminal,
  LoopguardError,
  type Policy,
  parsePolicy,
  resolvePolicy,
  type Similarity,
} from '../domain/index.js';
import { FileSchemaStore, type SchemaStore } from '../events/index.js';
import { DEFAULT_DATA_DIR, EmbeddedLog, type EventLog, EventStore } from '../log/index.js';
import { type Clock, RunActor, systemClock } from '../machines/index.js';
import { GuardTelemetry, LoopguardMetrics } from '../telemetry/index.js';
import { FileLedger } from './file-ledger.js';
import { GuardedRun } from './guarded-run.js';
import type { Ledger } from './ledger.js';
import { nodeHashing } from './node-hashing.js';
import { RunFamily } from './run-family.js';
import type { RunStore } from './run-store.js';
import { runStoreOf } from './store-adapter.js';

export interface GuardPorts {
  readonly store: RunStore;
  readonly ledger: Ledger;
  readonly policy?: Policy;
  readonly clock?: Clock;
  readonly similarity?: Similarity;
  /** Key for hashing secret-looking argument values (else LOOPGUARD_SECRET_KEY). */
  readonly secretKey?: string;
  /** Prometheus metrics of this guard's calls; a registry of its own by default. */
  readonly metrics?: LoopguardMetrics;
  /** Where `execute_tool` spans go; the global OpenTelemetry tracer (a no-op without an SDK) by default. */
  readonly tracer?: Tracer;
  /** Called when the guard is closed (the adapters it opened). */
  readonly onClose?: () => Promise<void>;
}

export interface StartRun {
  readonly runId: string;
  readonly taskType?: string;
  readonly tenant?: string;
  readonly progressVersion?: number;
  readonly meta?: Readonly<Record<string, string>>;
  /**
   * Makes this run a sub-agent of a live run of this guard: its steps, tokens and cost also count
   * against every ancestor's budgets, and it ends when an ancestor ends.
   */
  readonly parentRunId?: string;
}

/** The library's entry point: runs, each behind its own actor, over one log and one ledger. */
export class Guard {
  private readonly runs = new Map<string, GuardedRun>();
  private readonly family = new RunFamily();
  private readonly deps: DeciderDeps;
  private readonly telemetry: GuardTelemetry;
  readonly policy: Policy;
  /** The metrics behind `metrics()`: merge `.registry` into an application's own registry to serve both. */
  readonly loopguardMetrics: LoopguardMetrics;

  constructor(private readonly ports: GuardPorts) {
    this.policy = ports.policy ?? DEFAULT_POLICY;
    this.loopguardMetrics = ports.metrics ?? new LoopguardMetrics();
    this.telemetry = new GuardTelemetry({
      metrics: this.loopguardMetrics,
      ...(ports.tracer ? { tracer: ports.tracer } : {}),
    });
    this.deps = { hashing: nodeHashing(ports.secretKey), similarity: ports.similarity ?? diceSimilarity };
  }

  private clock(): Clock {
    return this.ports.clock ?? systemClock;
  }

  async startRun(opts: StartRun): Promise<GuardedRun> {
    const history = this.runs.has(opts.runId) ? [] : await this.ports.store.loadRun(opts.runId);
    if (this.runs.has(opts.runId) || history.length > 0) {
      throw new LoopguardError(
        'run_exists',
        `run ${opts.runId} already exists; use guard.resume(${JSON.stringify(opts.runId)}, ...) to continue it`,
      );
    }
    if (opts.parentRunId !== undefined) {
      const parent = this.runs.get(opts.parentRunId);
      if (parent === undefined)
        throw new LoopguardError(
          'unknown_parent',
          `parentRunId: run ${opts.parentRunId} is not a run this guard holds; start or resume it first`,
        );
      if (isTerminal(parent.state.status))
        throw new LoopguardError(
          'parent_ended',
          `parentRunId: run ${opts.parentRunId} has ended (${parent.state.status}); a sub-agent cannot start under it`,
        );
    }
    const run = new GuardedRun(
      new RunActor(opts.runId, this.deps, this.clock()),
      this.ports.store,
      this.ports.ledger,
      this.family,
      this.telemetry,
    );
    await run.start({ ...opts, type: 'StartRun', policy: resolvePolicy(this.policy, opts.taskType) });
    this.runs.set(opts.runId, run);
    this.family.add(run);
    return run;
  }

  /**
   * Rebuilds the run from the log and records an approved precondition change. Completed side
   * effects stay in the ledger, so redoing the plan returns them cached instead of running them.
   */
  async resume(
    runId: string,
    change: { preconditionChange: string; approvedBy?: string },
  ): Promise<GuardedRun> {
    let run = this.runs.get(runId);
    if (run === undefined) {
      const history = await this.ports.store.loadRun(runId);
      if (history.length === 0) throw new LoopguardError('unknown_run', `run ${runId} is not in the log`);
      run = new GuardedRun(
        new RunActor(runId, this.deps, this.clock(), history),
        this.ports.store,
        this.ports.ledger,
        this.family,
        this.telemetry,
      );
      this.runs.set(runId, run);
      this.family.add(run);
    }
    await run.resumeWith(change);
    return run;
  }

  /** The metrics hook: this guard's metrics in the Prometheus text format, for an application's `/metrics`. */
  metrics(): Promise<string> {
    return this.loopguardMetrics.text();
  }

  /** The live run, if this guard holds it. */
  run(runId: string): GuardedRun | undefined {
    return this.runs.get(runId);
  }

  async close(): Promise<void> {
    this.runs.clear();
    await this.ports.ledger.close();
    await this.ports.onClose?.();
  }
}

export interface CreateGuard {
  /** A Policy, or plain JSON as in a policy file (validated). */
  readonly policy?: Policy | unknown;
  /** Embedded data dir (default ./.loopguard). */
  readonly dataDir?: string;
  /** An EventLog of your own (for example KafkaLog); default: the embedded log in dataDir. */
  readonly log?: EventLog;
  readonly ledger?: Ledger;
  readonly schemaStore?: SchemaStore;
  readonly clock?: Clock;
  readonly similarity?: Similarity;
  readonly secretKey?: string;
  readonly metrics?: LoopguardMetrics;
  readonly tracer?: Tracer;
}

const isPolicy = (p: unknown): p is Policy =>
  typeof p === 'object' && p !== null && 'rules' in p && 'tools' in p && 'taskTypes' in p;

/** Opens the adapters (embedded by default) and returns a Guard over them. */
export async function createGuard(opts: CreateGuard = {}): Promise<Guard> {
  let policy: Policy = DEFAULT_POLICY;
  if (opts.policy !== undefined) {
    if (isPolicy(opts.policy)) policy = opts.policy;
    else {
      const parsed = parsePolicy(opts.policy);
      if (!parsed.ok) throw parsed.error;
      policy = parsed.value;
    }
  }
  const dataDir = opts.dataDir ?? DEFAULT_DATA_DIR;
  const log = opts.log ?? (await EmbeddedLog.open(dataDir));
  const events = await EventStore.create(
    log,
    opts.schemaStore ?? new FileSchemaStore(join(dataDir, 'schemas')),
  );
  return new Guard({
    store: runStoreOf(events),
    ledger: opts.ledger ?? FileLedger.open(dataDir),
    policy,
    ...(opts.clock ? { clock: opts.clock } : {}),
    ...(opts.similarity ? { similarity: opts.similarity } : {}),
    ...(opts.secretKey ? { secretKey: opts.secretKey } : {}),
    ...(opts.metrics ? { metrics: opts.metrics } : {}),
    ...(opts.tracer ? { tracer: opts.tracer } : {}),
    onClose: async () => {
      if (opts.log === undefined) await log.close();
    },
  });
}
