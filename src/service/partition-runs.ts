/**
 * The run actors of one owned requests partition. Requests and runs are keyed alike (run id,
 * murmur2 as Kafka's Java client and kafkajs partition), so the runs of requests partition p live
 * in runs partition p: on assignment the worker folds that one partition (committed records only,
 * by the same batch rule every run-stream reader applies) instead of loading run by run. A run
 * whose key the runs topic puts elsewhere (a client with another partitioner) is loaded from its
 * own stream (snapshot + tail) on first use. The map is the truth only while this worker owns the partition: it is
 * dropped on every rebalance and rebuilt from the log, with each run's latest answers (the
 * decisions its tagged batches were given), so a repeated request is answered alike after a takeover.
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
import { type AnsweredRequest, recordedDecision } from './decide-request.js';
import { ANSWER_HEADERS, ANSWERS_KEPT, RecentAnswers } from './recent-answers.js';
import type { RequestType, WireDecision } from './service-topics.js';

export interface RunsContext {
  readonly log: KafkaLog;
  readonly admin: Admin;
  readonly events: EventStore;
  readonly stream: KafkaRunStream;
  readonly deps: DeciderDeps;
  readonly clock: Clock;
  readonly timeoutMs: number;
}

/** Consecutive records of one append, and the request whose decision they carry, if tagged. */
interface Batch {
  readonly id: string | null;
  /** Index in the run's history just past the batch's last record. */
  end: number;
  readonly request: AnsweredRequest | null;
  readonly worker: string;
}

export class PartitionRuns {
  private constructor(
    private readonly ctx: RunsContext,
    readonly partition: number,
    private readonly runs: Map<string, RunActor>,
    private readonly answers: RecentAnswers,
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
    const batches = new Map<string, Batch[]>();
    const pending: Promise<void>[] = [];
    if (range !== undefined) {
      await readRanges(
        ctx.log.kafka,
        name,
        [{ partition, from: Number(range.low), to: Number(range.high) }],
        ctx.timeoutMs,
        (m) => {
          const key = m.message.key?.toString() ?? '';
          const headers = headersToStrings(m.message.headers);
          const next = foldRunRecord(heads.get(key) ?? EMPTY_HEAD, headers);
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
          placeInBatch(batches, key, next.batch, history.length, headers);
        },
      );
    }
    await Promise.all(pending);
    const runs = new Map<string, RunActor>();
    const answers = new RecentAnswers();
    for (const [runId, history] of histories)
      runs.set(runId, replay(ctx, runId, history, batches.get(runId) ?? [], answers));
    return new PartitionRuns(ctx, partition, runs, answers);
  }

  /** The decision already given to this request of the run, if it is among the run's latest. */
  answered(runId: string, requestId: string): WireDecision | undefined {
    return this.answers.get(runId, requestId);
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

  /**
   * Keeps a decision that recorded no run event (a REISSUE's: its note is in the ledger) for a
   * repeat. No batch of the log names it, so after a takeover the ledger answers its repeat instead.
   */
  remember(decision: WireDecision): void {
    this.answers.add(decision);
  }

  /** Keeps the actor of a run that recorded `decision`'s events, and the decision for a repeat. */
  keep(actor: RunActor, decision: WireDecision): void {
    if (actor.state.seq > 0) this.runs.set(actor.runId, actor);
    this.answers.add(decision);
  }
}

function placeInBatch(
  batches: Map<string, Batch[]>,
  runId: string,
  batch: string | null,
  end: number,
  headers: Readonly<Record<string, string>> | undefined,
): void {
  const list = batches.get(runId) ?? [];
  batches.set(runId, list);
  const last = list.at(-1);
  if (last !== undefined && batch !== null && last.id === batch) {
    last.end = end;
    return;
  }
  const requestId = headers?.[ANSWER_HEADERS.requestId];
  const type = headers?.[ANSWER_HEADERS.requestType];
  list.push({
    id: batch,
    end,
    request:
      requestId === undefined || type === undefined
        ? null
        : { request_id: requestId, run_id: runId, type: type as RequestType },
    worker: headers?.[ANSWER_HEADERS.worker] ?? '',
  });
}

/**
 * The run's actor from its history. The latest tagged batches are committed one at a time so the
 * decision each was given is read off the state right after it, exactly as its worker read it.
 */
function replay(
  ctx: RunsContext,
  runId: string,
  history: readonly RecordedEvent[],
  batches: readonly Batch[],
  answers: RecentAnswers,
): RunActor {
  const starts = batches.map((b, i) => ({ b, start: batches[i - 1]?.end ?? 0 }));
  const tagged = starts.filter(({ b }) => b.request !== null).slice(-ANSWERS_KEPT);
  let at = tagged[0]?.start ?? history.length;
  const actor = new RunActor(runId, ctx.deps, ctx.clock, history.slice(0, at));
  for (const { b, start } of tagged) {
    if (at < start) actor.commit(history.slice(at, start));
    const records = history.slice(start, b.end);
    actor.commit(records);
    at = b.end;
    answers.add(recordedDecision(b.request as AnsweredRequest, records, actor.state, b.worker));
  }
  if (at < history.length) actor.commit(history.slice(at));
  return actor;
}
