/**
 * One batch's view of a partition's runs: the batch moves copies of the runs' actors and answers,
 * never the partition's own, so a batch that fails before its transaction (a registry that does
 * not answer) leaves nothing behind, and its retry decides every request again. `apply` hands the
 * work to the partition once the transaction is to commit; a transaction that then fails drops the
 * partition whole (guard-worker.ts), so nothing outlives a batch the log does not hold.
 */
import type { RunActor } from '../machines/index.js';
import type { PartitionRuns } from './partition-runs.js';
import { type Answer, RecentAnswers } from './recent-answers.js';
import type { WireDecision } from './service-topics.js';

export class BatchRuns {
  private readonly actors = new Map<string, RunActor>();
  private readonly answers = new RecentAnswers();
  /** The partition's keep and remember calls of this batch, deferred to `apply`. */
  private readonly kept: (() => void)[] = [];

  constructor(private readonly runs: PartitionRuns) {}

  /** The decision this request already got: in this batch, else as the partition remembers it. */
  async answered(runId: string, requestId: string): Promise<Answer | undefined> {
    return this.answers.get(runId, requestId) ?? (await this.runs.answered(runId, requestId));
  }

  /** The run's actor for this batch: a copy of the partition's, moved only by this batch. */
  async actor(runId: string): Promise<RunActor> {
    const a = this.actors.get(runId) ?? this.runs.fork(await this.runs.actor(runId));
    this.actors.set(runId, a);
    return a;
  }

  /** As PartitionRuns.keep, once the batch commits. */
  keep(actor: RunActor, decision: WireDecision, batch: string, body: string): void {
    this.answers.add(decision, body);
    this.kept.push(() => this.runs.keep(actor, decision, batch, body));
  }

  /** As PartitionRuns.remember, once the batch commits. */
  remember(decision: WireDecision, body: string): void {
    this.answers.add(decision, body);
    this.kept.push(() => this.runs.remember(decision, body));
  }

  /** The batch's actors and answers become the partition's, in the order they were decided. */
  apply(): void {
    for (const k of this.kept) k();
    this.kept.length = 0;
  }
}
