/**
 * The batch rule (run-batch-fold.ts) for a consumer group's reader of the runs topic (`fleet
 * --follow`): which records count, as `readStream` and `readAll` count them. The rule needs each
 * run's head just before a record, and a group resumes mid-run, so the first record of a partition
 * (and the first after a rebalance or a re-delivery) has the partition's heads folded from its
 * start first: headers only, no decoding.
 */
import { TOPICS } from '../event-log.js';
import { headersToStrings } from './kafka-error.js';
import type { KafkaLog, PartitionedRecord } from './kafka-log.js';
import { readRanges } from './partition-reader.js';
import { foldInto, type RunHead } from './run-batch-fold.js';

interface PartitionHeads {
  /** The offset after the last record counted here. */
  next: number;
  readonly heads: Map<string, RunHead>;
}

export class CountedRunRecords {
  private readonly partitions = new Map<number, PartitionHeads>();

  constructor(private readonly log: KafkaLog) {}

  /** Forgets every partition's heads: after a rebalance they are folded again on the next record. */
  reset(): void {
    this.partitions.clear();
  }

  /** Whether `r`, the next record of its partition this reader handles, counts for its run. */
  async counts(r: PartitionedRecord): Promise<boolean> {
    let p = this.partitions.get(r.partition);
    if (p === undefined || r.offset < p.next) {
      const low =
        (await this.log.partitionEnds(TOPICS.runs)).find((o) => o.partition === r.partition)?.low ?? 0;
      p = { next: r.offset, heads: await runHeads(this.log, r.partition, low, r.offset, 30_000) };
      this.partitions.set(r.partition, p);
    }
    p.next = r.offset + 1;
    return foldInto(p.heads, r.key, r.headers) !== null;
  }
}

/** Every run's head folded from the records [from, to) of a runs partition: headers only, no decoding. */
export async function runHeads(
  log: KafkaLog,
  partition: number,
  from: number,
  to: number,
  timeoutMs: number,
): Promise<Map<string, RunHead>> {
  const heads = new Map<string, RunHead>();
  await readRanges(log.kafka, log.physicalName(TOPICS.runs), [{ partition, from, to }], timeoutMs, (m) => {
    foldInto(heads, m.message.key?.toString() ?? '', headersToStrings(m.message.headers));
  });
  return heads;
}
