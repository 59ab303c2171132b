import { join } from 'node:path';
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
import {
  DEFAULT_DATA_DIR,
  EmbeddedLog,
  type EventLog,
  EventStore,
  type RunStream,
  runStreamOf,
} from '../log/index.js';
import { type Clock, RunActor, systemClock } from '../machines/index.js';
import { FileLedger } from './file-ledger.js';
import { GuardedRun } from './guarded-run.js';
import type { Ledger } from './ledger.js';
import { nodeHashing } from './node-hashing.js';
import { RunFamily } from './run-family.js';

export interface GuardPorts {
  /** The runs' event streams: read from a seq, append at an expected seq. */
  readonly store: RunStream;
  readonly ledger: Ledger;
  readonly policy?: Policy;
  readonly clock?: Clock;
  readonly similarity?: Similarity;
  /** Key for hashing secret-looking argument values (else LOOPGUARD_SECRET_KEY). */
  readonly secretKey?: string;
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
  readonly policy: Policy;

  constructor(private readonly ports: GuardPorts) {
    this.policy = ports.policy ?? DEFAULT_POLICY;
    this.deps = { hashing: nodeHashing(ports.secretKey), similarity: ports.similarity ?? diceSimilarity };
  }

  private clock(): Clock {
    return this.ports.clock ?? systemClock;
  }

  /**
   * Starts a run: its first event is appended at seq 0, so a run id already in the log is refused
   * by the stream itself (no search of the log), also when another process started it meanwhile.
   */
  async startRun(opts: StartRun): Promise<GuardedRun> {
    if (this.runs.has(opts.runId)) throw runExists(opts.runId);
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
    );
    try {
      await run.start({ ...opts, type: 'StartRun', policy: resolvePolicy(this.policy, opts.taskType) });
    } catch (e) {
      if (e instanceof LoopguardError && e.code === 'conflict') throw runExists(opts.runId);
      throw e;
    }
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
      const loaded = await this.ports.store.load(runId);
      if (loaded.snapshot === null && loaded.events.length === 0)
        throw new LoopguardError('unknown_run', `run ${runId} is not in the log`);
      run = new GuardedRun(
        new RunActor(runId, this.deps, this.clock(), loaded.events, loaded.snapshot),
        this.ports.store,
        this.ports.ledger,
        this.family,
      );
      this.runs.set(runId, run);
      this.family.add(run);
    }
    await run.resumeWith(change);
    return run;
  }

  /** The live run, if this guard holds it. */
  run(runId: string): GuardedRun | undefined {
    return this.runs.get(runId);
  }

  /** Makes every run's held last result durable, then closes the adapters the guard opened. */
  async close(): Promise<void> {
    await Promise.all([...this.runs.values()].map((r) => r.flush().catch(() => undefined)));
    this.runs.clear();
    await this.ports.ledger.close();
    await this.ports.onClose?.();
  }
}

const runExists = (runId: string): LoopguardError =>
  new LoopguardError(
    'run_exists',
    `run ${runId} already exists; use guard.resume(${JSON.stringify(runId)}, ...) to continue it`,
  );

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
  const store = runStreamOf(events);
  return new Guard({
    store,
    ledger: opts.ledger ?? FileLedger.open(dataDir),
    policy,
    ...(opts.clock ? { clock: opts.clock } : {}),
    ...(opts.similarity ? { similarity: opts.similarity } : {}),
    ...(opts.secretKey ? { secretKey: opts.secretKey } : {}),
    onClose: async () => {
      await store.close();
      if (opts.log === undefined) await log.close();
    },
  });
}
