/**
 * The memory of decided signatures (tenant-replays.ts) is each worker's own, so a takeover reads
 * them back from the partition: every request before the committed offset was decided (or
 * refused). A client stamps its record no earlier than it signed, in the same clock, so every
 * request the window could still admit lies at or after the first record stamped inside it (what
 * the broker's time index finds). One whose client forged an older stamp can fall before it: its
 * replay is then refused only once out of its window. Remembering a refused request is harmless.
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
