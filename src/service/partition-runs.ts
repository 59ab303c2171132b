/**
 * The run actors of one owned requests partition. Requests and runs are keyed alike (run id,
 * murmur2 as Kafka's Java client and kafkajs partition), so the runs of requests partition p live
 * in runs partition p: on assignment the worker folds that one partition (committed records only,
 * by the same batch rule every run-stream reader applies) instead of loading run by run. A run
 * whose key the runs topic puts elsewhere (a client with another partitioner) is loaded from its
 * own stream (snapshot + tail) on first use. The map is the truth only while this worker owns the partition: it is
 * dropped on every rebalance and rebuilt from the log.
 */
import type { Admin } from 'kafkajs';
import type { DeciderDeps, RecordedEvent } from '../domain/index.js';
import { TOPICS } from '../log/event-log.js';
import type { EventStore } from '../log/event-store.js';
import { headersToStrings } from '../log/kafka/kafka-error.js';
import type { KafkaLog } from '../log/kafka/kafka-log.js';
import type { KafkaRunStream } from '../log/kafka/kafka-run-stream.js';
import { readRanges } from '../log/kafka/partition-reader.js';
import { EMPTY_HEAD, foldRunRecord, type RunHead } from '../log/kafka/run-batch-fold.js';
import { type Clock, RunActor } from '../machines/index.js';

export interface RunsContext {
  readonly log: KafkaLog;
  readonly admin: Admin;
  readonly events: EventStore;
  readonly stream: KafkaRunStream;
  readonly deps: DeciderDeps;
  readonly clock: Clock;
  readonly timeoutMs: number;
}

export class PartitionRuns {
  private constructor(
    private readonly ctx: RunsContext,
    readonly partition: number,
    private readonly runs: Map<string, RunActor>,
  ) {}

  get size(): number {
    return this.runs.size;
  }

  /** Folds runs partition `partition` up to its current end into one actor per run. */
  static async load(ctx: RunsContext, partition: number): Promise<PartitionRuns> {
    const name = ctx.log.physicalName(TOPICS.runs);
    const offsets = await ctx.admin.fetchTopicOffsets(name);
    const range = offsets.find((o) => o.partition === partition);
    const heads = new Map<string, RunHead>();
    const histories = new Map<string, RecordedEvent[]>();
    const pending: Promise<void>[] = [];
    if (range !== undefined) {
      await readRanges(
        ctx.log.kafka,
        name,
        [{ partition, from: Number(range.low), to: Number(range.high) }],
        ctx.timeoutMs,
        (m) => {
          const key = m.message.key?.toString() ?? '';
          const next = foldRunRecord(heads.get(key) ?? EMPTY_HEAD, headersToStrings(m.message.headers));
          if (next === null) return;
          heads.set(key, next);
          const history = histories.get(key) ?? [];
          histories.set(key, history);
          const value = m.message.value ?? Buffer.alloc(0);
          const known = ctx.events.decodeKnown(TOPICS.runs, value);
          if (known !== undefined) history.push(known);
          else {
            // Rare (first record of an unseen schema): keep the slot so the order holds.
            const slot = history.length;
            history.push(undefined as unknown as RecordedEvent);
            pending.push(ctx.events.decode(TOPICS.runs, value).then((e) => void (history[slot] = e)));
          }
        },
      );
    }
    await Promise.all(pending);
    const runs = new Map<string, RunActor>();
    for (const [runId, history] of histories)
      runs.set(runId, new RunActor(runId, ctx.deps, ctx.clock, history));
    return new PartitionRuns(ctx, partition, runs);
  }

  /** The run's actor; a run never recorded gets a fresh one, kept only once it has events. */
  async actor(runId: string): Promise<RunActor> {
    const held = this.runs.get(runId);
    if (held !== undefined) return held;
    if ((await this.ctx.log.partitionOfKey(TOPICS.runs, runId)) === this.partition)
      return new RunActor(runId, this.ctx.deps, this.ctx.clock);
    const loaded = await this.ctx.stream.load(runId);
    return new RunActor(runId, this.ctx.deps, this.ctx.clock, loaded.events, loaded.snapshot);
  }

  keep(actor: RunActor): void {
    if (actor.state.seq > 0) this.runs.set(actor.runId, actor);
  }
}
