/**
 * The memory of decided signatures (tenant-replays.ts) is each worker's own: a worker that takes a
 * requests partition over has not seen what the worker before it decided there, and would decide a
 * replay of it again once its run no longer remembers the answer. So a takeover reads the
 * signatures back from the partition itself: every request before the committed offset was
 * decided (or refused), and a signed request is admitted only while its `sent_at_ms` is inside the
 * window of the worker's clock. Its client stamps the record no earlier than it signed, in the
 * same clock, so every request that could still be admitted lies at or after the first record
 * stamped inside the window (what the broker's time index finds). A record whose client forged an
 * older stamp can fall before it; its replay is not refused as a replay, only if still in its window.
 * Remembering a request that was refused is harmless: its replay is refused either way.
 */
import { withKafkaRetry } from '../log/kafka/kafka-retry.js';
import { readRanges } from '../log/kafka/partition-reader.js';
import type { RunsContext } from './runs-context.js';
import type { ServiceCodec } from './service-codec.js';
import type { WireRequest } from './service-topics.js';
import { SIGNATURE_WINDOW_MS, type Signed } from './tenant-replays.js';

export interface RecallFrom extends Pick<RunsContext, 'log' | 'admin' | 'timeoutMs'> {
  readonly requests: ServiceCodec<WireRequest>;
  /** The physical requests topic. */
  readonly topic: string;
}

/** The signed requests of `partition` before `committed` that the window at `nowMs` may still admit. */
export async function recallSignatures(
  ctx: RecallFrom,
  partition: number,
  committed: number,
  nowMs: number,
): Promise<Signed[]> {
  if (committed <= 0) return [];
  const since = nowMs - SIGNATURE_WINDOW_MS;
  const found = await withKafkaRetry(`finding ${ctx.topic} records since ${since}`, () =>
    ctx.admin.fetchTopicOffsetsByTimestamp(ctx.topic, since),
  );
  // -1: no record stamped inside the window.
  const from = Number(found.find((p) => p.partition === partition)?.offset ?? -1);
  if (from < 0 || from >= committed) return [];
  const signed: Signed[] = [];
  const pending: Promise<void>[] = [];
  await readRanges(ctx.log.kafka, ctx.topic, [{ partition, from, to: committed }], ctx.timeoutMs, (m) => {
    if (m.message.value === null) return;
    pending.push(
      ctx.requests.decode(m.message.value).then(
        (r) => {
          if (r.signature !== null && r.sent_at_ms > since)
            signed.push({ signature: r.signature, sentAtMs: r.sent_at_ms });
        },
        // Undecodable: it was dead-lettered, never decided.
        () => undefined,
      ),
    );
  });
  await Promise.all(pending);
  return signed;
}
