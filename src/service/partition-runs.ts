/**
 * The run actors of one owned requests partition. Requests and runs are keyed alike (run id,
 * murmur2 as Kafka's Java client and kafkajs partition), so the runs of requests partition p live
 * in runs partition p (folded by partition-fold.ts). A run whose key the runs topic puts elsewhere
 * (a client with another partitioner) is loaded from its own stream on first use, and is never
 * part of a partition snapshot: its records are not in this partition's tail. The map is the truth
 * only while this worker owns the partition: it is dropped on every rebalance and rebuilt from the
 * log with each run's latest answers, so a repeated request is answered alike after a takeover.
 */
import { isTerminal } from '../domain/index.js';
import { TOPICS } from '../log/event-log.js';
import { RunActor } from '../machines/index.js';
import { foldPartition, fromStream } from './partition-fold.js';
import type { EndedRun, HeldRun, PartitionSnapshot } from './partition-snapshots.js';
import type { Answer, RecentAnswers } from './recent-answers.js';
import type { RunsContext } from './runs-context.js';
import type { WireDecision } from './service-topics.js';

/** What a load read: the snapshot it started from (if any) and how many runs records after it. */
export interface LoadReport {
  readonly snapshot: string | null;
  readonly runsRead: number;
}

export class PartitionRuns {
  private constructor(
    private readonly ctx: RunsContext,
    readonly partition: number,
    private readonly runs: Map<string, RunActor>,
    /** Batch of each local run's last record, as the fold of its stream has it. */
    private readonly batches: Map<string, string | null>,
    private readonly answers: RecentAnswers,
    /** Ended runs put aside (see partition-snapshots.ts), read back when asked for again. */
    private readonly ended: Map<string, EndedRun>,
    readonly loaded: LoadReport,
  ) {
    const now = ctx.clock.now();
    for (const id of runs.keys()) this.touched.set(id, now);
  }

  /** Runs loaded from their own stream because their runs partition is another: not snapshotted. */
  private readonly foreign = new Set<string>();
  /** When each held run was last asked for or loaded, by the worker's clock. */
  private readonly touched = new Map<string, number>();

  get size(): number {
    return this.runs.size;
  }

  /** The runs of runs partition `partition` up to its current end, from snapshot `from` if given. */
  static async load(
    ctx: RunsContext,
    partition: number,
    from: PartitionSnapshot | null = null,
  ): Promise<PartitionRuns> {
    const f = await foldPartition(ctx, partition, from);
    return new PartitionRuns(ctx, partition, f.runs, f.batches, f.answers, f.ended, {
      snapshot: from?.id ?? null,
      runsRead: f.runsRead,
    });
  }

  /** The decision already given to this request of the run, if it is among the run's latest. */
  async answered(runId: string, requestId: string): Promise<Answer | undefined> {
    // A run put aside keeps its answers in its record.
    const ref = this.ended.get(runId);
    if (ref !== undefined) await this.revive(ref);
    return this.answers.get(runId, requestId);
  }

  /** The run's actor; a run never recorded gets a fresh one, kept only once it has events. */
  async actor(runId: string): Promise<RunActor> {
    const held = this.runs.get(runId);
    if (held !== undefined) {
      this.touched.set(runId, this.ctx.clock.now());
      return held;
    }
    const ref = this.ended.get(runId);
    if (ref !== undefined) return this.revive(ref);
    const runsPartition = await this.ctx.log.partitionOfKey(TOPICS.runs, runId);
    if (runsPartition === this.partition) return new RunActor(runId, this.ctx.deps, this.ctx.clock);
    if (this.foreign.size === 0)
      this.ctx.note?.(
        `partition ${this.partition}: run ${runId} has its requests here but its events in runs partition ${runsPartition}: its client does not partition by murmur2 (librdkafka: partitioner=murmur2_random) or the two topics have different partition counts, so such runs are loaded from their own streams, left out of snapshots, and their repeated requests are decided again`,
      );
    this.foreign.add(runId);
    return fromStream(this.ctx, runId);
  }

  /** A copy of `actor` at its state, for a batch to move without moving the partition's (batch-runs.ts). */
  fork(actor: RunActor): RunActor {
    return new RunActor(actor.runId, this.ctx.deps, this.ctx.clock, [], actor.state);
  }

  /**
   * Keeps a decision that recorded no run event (a REISSUE's: its note is in the ledger) for a
   * repeat. No batch of the log names it, so after a takeover its repeat is answered from the
   * partition's snapshot if one was taken since, else by the ledger (decide-request.ts: decideReissue).
   */
  remember(decision: WireDecision, body: string): void {
    this.answers.add(decision, body);
    this.touched.set(decision.run_id, this.ctx.clock.now());
  }

  /** Keeps the actor of a run that recorded `decision`'s events in `batch`, and the decision for a repeat. */
  keep(actor: RunActor, decision: WireDecision, batch: string, body: string): void {
    if (actor.state.seq > 0) this.runs.set(actor.runId, actor);
    this.batches.set(actor.runId, batch);
    this.answers.add(decision, body);
    this.touched.set(actor.runId, this.ctx.clock.now());
  }

  /**
   * The held runs that ended and were not asked for in `idleMs`: what the next snapshot puts
   * aside. A repeat of their requests, long after, is then answered from the run's own record.
   */
  idleEnded(idleMs: number): HeldRun[] {
    const now = this.ctx.clock.now();
    return this.held().filter(
      (r) => isTerminal(r.state.status) && now - (this.touched.get(r.runId) ?? now) >= idleMs,
    );
  }

  /** `ref`'s run is put aside: its record holds it from now on (the snapshot keeps `ref`). */
  putAside(ref: EndedRun): void {
    this.runs.delete(ref.runId);
    this.batches.delete(ref.runId);
    this.touched.delete(ref.runId);
    this.answers.drop(ref.runId);
    this.ended.set(ref.runId, ref);
  }

  /** The ended runs put aside, by run id: what a snapshot keeps of them. */
  endedRuns(): EndedRun[] {
    return [...this.ended.values()].sort((a, b) => (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0));
  }

  private async revive(ref: EndedRun): Promise<RunActor> {
    const run = await this.ctx.snapshots.readEnded(ref, this.ctx.group, this.partition);
    // A record that is gone costs the run its latest answers, not its state.
    const actor =
      run === null
        ? await fromStream(this.ctx, ref.runId)
        : new RunActor(ref.runId, this.ctx.deps, this.ctx.clock, [], run.state);
    for (const a of run?.answers ?? []) this.answers.add(a, run?.bodies?.[a.request_id] ?? null);
    this.ended.delete(ref.runId);
    this.runs.set(ref.runId, actor);
    this.batches.set(ref.runId, run === null ? ref.batch : run.batch);
    this.touched.set(ref.runId, this.ctx.clock.now());
    return actor;
  }

  /** Every run of this runs partition as held now, by run id: what a snapshot records. */
  held(): HeldRun[] {
    return [...this.runs.keys()]
      .filter((id) => !this.foreign.has(id))
      .sort()
      .map((runId) => {
        const state = (this.runs.get(runId) as RunActor).state;
        return {
          runId,
          seq: state.seq,
          batch: this.batches.get(runId) ?? null,
          state,
          answers: this.answers.of(runId),
          bodies: this.answers.bodiesOf(runId),
        };
      });
  }
}
