/**
 * The batch rule (run-batch-fold.ts) for a consumer group's reader of the runs topic (`fleet
 * --follow`): which of the records it is handed count, as `readStream` and `readAll` count them,
 * so a losing writer's batch or a zombie append means nothing to it either.
 *
 * The rule needs each run's head just before a record. A group resumes at its committed offsets,
 * mid-run, so the first record of a partition (and the first after a rebalance, when another
 * member may have read on meanwhile, or a re-delivery) has the partition's heads folded from its
 * start up to that record first: headers only, no decoding.
 */
import { TOPICS } from '../event-log.js';
import { headersToStrings } from './kafka-error.js';
import type { KafkaLog, PartitionedRecord } from './kafka-log.js';
import { readRanges } from './partition-reader.js';
import { EMPTY_HEAD, foldRunRecord, type RunHead } from './run-batch-fold.js';

interface PartitionHeads {
  /** The offset after the last record counted here. */
  next: number;
  readonly heads: Map<string, RunHead>;
}

export class CountedRunRecords {
  private readonly partitions = new Map<number, PartitionHeads>();

  constructor(
    private readonly log: KafkaLog,
    private readonly timeoutMs = 30_000,
  ) {}

  /** Forgets every partition's heads: after a rebalance they are folded again on the next record. */
  reset(): void {
    this.partitions.clear();
  }

  /** Whether `r`, the next record of its partition this reader handles, counts for its run. */
  async counts(r: PartitionedRecord): Promise<boolean> {
    let p = this.partitions.get(r.partition);
    if (p === undefined || r.offset < p.next) {
      p = { next: r.offset, heads: await this.headsBefore(r.partition, r.offset) };
      this.partitions.set(r.partition, p);
    }
    p.next = r.offset + 1;
    const head = foldRunRecord(p.heads.get(r.key) ?? EMPTY_HEAD, r.headers);
    if (head === null) return false;
    p.heads.set(r.key, head);
    return true;
  }

  private async headsBefore(partition: number, offset: number): Promise<Map<string, RunHead>> {
    const heads = new Map<string, RunHead>();
    const low = (await this.log.partitionEnds(TOPICS.runs)).find((o) => o.partition === partition)?.low ?? 0;
    await readRanges(
      this.log.kafka,
      this.log.physicalName(TOPICS.runs),
      [{ partition, from: low, to: offset }],
      this.timeoutMs,
      (m) => {
        const key = m.message.key?.toString() ?? '';
        const head = foldRunRecord(heads.get(key) ?? EMPTY_HEAD, headersToStrings(m.message.headers));
        if (head !== null) heads.set(key, head);
      },
    );
    return heads;
  }
}
