/**
 * The run actors of one owned requests partition. Requests and runs are keyed alike (run id,
 * murmur2 as Kafka's Java client and kafkajs partition), so the runs of requests partition p live
 * in runs partition p: on assignment the worker loads that partition's runs from its newest
 * snapshot (partition-snapshots.ts) and folds only the runs records after it, or, without a
 * snapshot, folds the whole partition (committed records only, by the same batch rule every
 * run-stream reader applies). A run whose key the runs topic puts elsewhere (a client with another
 * partitioner) is loaded from its own stream (snapshot + tail) on first use, and is never part of
 * a partition snapshot: its records are not in this partition's tail. The map is the truth only
 * while this worker owns the partition: it is dropped on every rebalance and rebuilt from the log,
 * with each run's latest answers (the decisions its tagged batches were given), so a repeated
 * request is answered alike after a takeover.
 */
import type { Admin } from 'kafkajs';
import {
  type DeciderDeps,
  isTerminal,
  LoopguardError,
  type RecordedEvent,
  type RunState,
} from '../domain/index.js';
import { TOPICS } from '../log/event-log.js';
import type { EventStore } from '../log/event-store.js';
import { headersToStrings } from '../log/kafka/kafka-error.js';
import type { KafkaLog } from '../log/kafka/kafka-log.js';
import type { KafkaRunStream } from '../log/kafka/kafka-run-stream.js';
import { readRanges } from '../log/kafka/partition-reader.js';
import { EMPTY_HEAD, foldRunRecord, type RunHead } from '../log/kafka/run-batch-fold.js';
import { type Clock, RunActor } from '../machines/index.js';
import { type AnsweredRequest, recordedDecision } from './decide-request.js';
import type { EndedRun, HeldRun, PartitionSnapshot, PartitionSnapshots } from './partition-snapshots.js';
import { ANSWER_HEADERS, ANSWERS_KEPT, RecentAnswers } from './recent-answers.js';
import type { RequestType, WireDecision } from './service-topics.js';

export interface RunsContext {
  readonly log: KafkaLog;
  readonly admin: Admin;
  readonly events: EventStore;
  readonly stream: KafkaRunStream;
  /** Where ended runs put aside are read back from, with the workers' group. */
  readonly snapshots: PartitionSnapshots;
  readonly group: string;
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

  /**
   * The runs of runs partition `partition` up to its current end: `from`'s states and the records
   * from its `runsFrom` on, or every record of the partition when there is no snapshot.
   */
  static async load(
    ctx: RunsContext,
    partition: number,
    from: PartitionSnapshot | null = null,
  ): Promise<PartitionRuns> {
    const name = ctx.log.physicalName(TOPICS.runs);
    const offsets = await ctx.admin.fetchTopicOffsets(name);
    const range = offsets.find((o) => o.partition === partition);
    const base = new Map((from?.runs ?? []).map((r) => [r.runId, r]));
    const ended = new Map((from?.ended ?? []).map((r) => [r.runId, r]));
    const heads = new Map<string, RunHead>(
      [...base.values(), ...ended.values()].map((r) => [r.runId, { seq: r.seq, batch: r.batch }]),
    );
    const histories = new Map<string, RecordedEvent[]>();
    const batches = new Map<string, Batch[]>();
    const pending: Promise<void>[] = [];
    let runsRead = 0;
    if (range !== undefined) {
      // Reading from before the snapshot's records is harmless: the fold skips seqs it has.
      const low = Math.max(Number(range.low), from?.runsFrom ?? 0);
      await readRanges(
        ctx.log.kafka,
        name,
        [{ partition, from: low, to: Number(range.high) }],
        ctx.timeoutMs,
        (m) => {
          runsRead++;
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
            pending.push(
              ctx.events.decode(TOPICS.runs, value).then((e) => {
                history[slot] = e;
              }),
            );
          }
          placeInBatch(batches, key, next.batch, history.length, headers);
        },
      );
    }
    await Promise.all(pending);
    // An ended run put aside that the tail continues (it was asked for again): its state first.
    for (const runId of histories.keys()) {
      const ref = ended.get(runId);
      if (ref === undefined) continue;
      base.set(runId, await readEnded(ctx, partition, ref));
      ended.delete(runId);
    }
    const runs = new Map<string, RunActor>();
    const answers = new RecentAnswers();
    for (const r of base.values()) for (const a of r.answers) answers.add(a);
    for (const [runId, r] of base)
      if (!histories.has(runId)) runs.set(runId, new RunActor(runId, ctx.deps, ctx.clock, [], r.state));
    for (const [runId, history] of histories) {
      const state = base.get(runId)?.state ?? null;
      runs.set(runId, replay(ctx, runId, state, history, batches.get(runId) ?? [], answers));
    }
    const lastBatch = new Map([...heads].map(([id, h]) => [id, h.batch]));
    return new PartitionRuns(ctx, partition, runs, lastBatch, answers, ended, {
      snapshot: from?.id ?? null,
      runsRead,
    });
  }

  /** The decision already given to this request of the run, if it is among the run's latest. */
  async answered(runId: string, requestId: string): Promise<WireDecision | undefined> {
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
    if ((await this.ctx.log.partitionOfKey(TOPICS.runs, runId)) === this.partition)
      return new RunActor(runId, this.ctx.deps, this.ctx.clock);
    const loaded = await this.ctx.stream.load(runId);
    this.foreign.add(runId);
    return new RunActor(runId, this.ctx.deps, this.ctx.clock, loaded.events, loaded.snapshot);
  }

  /**
   * Keeps a decision that recorded no run event (a REISSUE's: its note is in the ledger) for a
   * repeat. No batch of the log names it, so after a takeover its repeat is answered from the
   * partition's snapshot if one was taken since, else by the ledger (decide-reissue.ts).
   */
  remember(decision: WireDecision): void {
    this.answers.add(decision);
    this.touched.set(decision.run_id, this.ctx.clock.now());
  }

  /** Keeps the actor of a run that recorded `decision`'s events in `batch`, and the decision for a repeat. */
  keep(actor: RunActor, decision: WireDecision, batch: string): void {
    if (actor.state.seq > 0) this.runs.set(actor.runId, actor);
    this.batches.set(actor.runId, batch);
    this.answers.add(decision);
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
    const run = await readEnded(this.ctx, this.partition, ref);
    const actor = new RunActor(ref.runId, this.ctx.deps, this.ctx.clock, [], run.state);
    for (const a of run.answers) this.answers.add(a);
    this.ended.delete(ref.runId);
    this.runs.set(ref.runId, actor);
    this.batches.set(ref.runId, run.batch);
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
        };
      });
  }
}

/** An ended run's own record; a missing one is an error to retry, never a fresh run. */
async function readEnded(ctx: RunsContext, partition: number, ref: EndedRun): Promise<HeldRun> {
  const run = await ctx.snapshots.readEnded(ref, ctx.group, partition);
  if ('missing' in run)
    throw new LoopguardError('log_unavailable', `ended run ${ref.runId}: ${run.missing}`, {
      retriable: true,
    });
  return run;
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
 * The run's actor from its history (after `from`, a snapshot's state, when there is one). The latest tagged batches are committed one at a time so the
 * decision each was given is read off the state right after it, exactly as its worker read it.
 */
function replay(
  ctx: RunsContext,
  runId: string,
  from: RunState | null,
  history: readonly RecordedEvent[],
  batches: readonly Batch[],
  answers: RecentAnswers,
): RunActor {
  const starts = batches.map((b, i) => ({ b, start: batches[i - 1]?.end ?? 0 }));
  const tagged = starts.filter(({ b }) => b.request !== null).slice(-ANSWERS_KEPT);
  let at = tagged[0]?.start ?? history.length;
  const actor = new RunActor(runId, ctx.deps, ctx.clock, history.slice(0, at), from);
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
