/**
 * Loading a requests partition's runs from the log: the runs partition with the same number,
 * folded from a partition snapshot (its states, then the records from its `runsFrom` on) or from
 * the partition's start, committed records only, by the batch rule every run-stream reader applies.
 */
import type { RecordedEvent, RunState } from '../domain/index.js';
import { TOPICS } from '../log/event-log.js';
import { headersToStrings } from '../log/kafka/kafka-error.js';
import { readRanges } from '../log/kafka/partition-reader.js';
import { foldInto, type RunHead } from '../log/kafka/run-batch-fold.js';
import { fetchTopicOffsets } from '../log/kafka/topic-registry.js';
import { RunActor } from '../machines/index.js';
import { type AnsweredRequest, recordedDecision } from './decide-request.js';
import type { EndedRun, PartitionSnapshot } from './partition-snapshots.js';
import { ANSWER_HEADERS, ANSWERS_KEPT, RecentAnswers } from './recent-answers.js';
import type { RunsContext } from './runs-context.js';
import type { RequestType } from './service-topics.js';

export interface FoldedPartition {
  readonly runs: Map<string, RunActor>;
  /** Batch of each run's last record. */
  readonly batches: Map<string, string | null>;
  readonly answers: RecentAnswers;
  /** The snapshot's ended runs put aside that no record since asked for. */
  readonly ended: Map<string, EndedRun>;
  readonly runsRead: number;
}

/** Consecutive records of one append, and the request whose decision they carry, if tagged. */
interface Batch {
  readonly id: string | null;
  /** Index in the run's history just past the batch's last record. */
  end: number;
  readonly request: AnsweredRequest | null;
  readonly worker: string;
  readonly body: string | null;
}

/** One actor per run of runs partition `partition` up to its current end, with its latest answers. */
export async function foldPartition(
  ctx: RunsContext,
  partition: number,
  from: PartitionSnapshot | null,
): Promise<FoldedPartition> {
  const name = ctx.log.physicalName(TOPICS.runs);
  const offsets = await fetchTopicOffsets(ctx.admin, name);
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
        const next = foldInto(heads, key, headers);
        if (next === null) return;
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
  const runs = new Map<string, RunActor>();
  for (const runId of histories.keys()) {
    const ref = ended.get(runId);
    if (ref === undefined) continue;
    ended.delete(runId);
    const run = await ctx.snapshots.readEnded(ref, ctx.group, partition);
    if (run !== null) base.set(runId, run);
    else {
      // Its record is gone: the run's own stream has all of it, the tail included (not its answers).
      runs.set(runId, await fromStream(ctx, runId));
      histories.delete(runId);
    }
  }
  const answers = new RecentAnswers();
  for (const r of base.values()) for (const a of r.answers) answers.add(a, r.bodies?.[a.request_id] ?? null);
  for (const [runId, r] of base)
    if (!histories.has(runId)) runs.set(runId, new RunActor(runId, ctx.deps, ctx.clock, [], r.state));
  for (const [runId, history] of histories) {
    const state = base.get(runId)?.state ?? null;
    runs.set(runId, replay(ctx, runId, state, history, batches.get(runId) ?? [], answers));
  }
  const lastBatch = new Map([...heads].filter(([id]) => runs.has(id)).map(([id, h]) => [id, h.batch]));
  return { runs, batches: lastBatch, answers, ended, runsRead };
}

/** The run from its own stream (snapshot + tail, or all of it): what a missing record falls back on. */
export async function fromStream(ctx: RunsContext, runId: string): Promise<RunActor> {
  const loaded = await ctx.stream.load(runId);
  return new RunActor(runId, ctx.deps, ctx.clock, loaded.events, loaded.snapshot);
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
    body: headers?.[ANSWER_HEADERS.body] ?? null,
  });
}

/**
 * The run's actor from its history (after `from`, a snapshot's state, if any). The latest tagged
 * batches are committed one at a time so the decision each was given (the answer a repeat gets) is
 * read off the state right after it, exactly as its worker read it.
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
    answers.add(recordedDecision(b.request as AnsweredRequest, records, actor.state, b.worker), b.body);
  }
  if (at < history.length) actor.commit(history.slice(at));
  return actor;
}
