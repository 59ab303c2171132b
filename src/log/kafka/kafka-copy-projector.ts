/**
 * Derives the stops and ledger copies on Kafka from the runs topic, exactly once: the writer
 * appends to runs only, and this projector (a consumer group over the runs topic) copies what it
 * holds, so a writer that dies right after its append cannot lose a stop alert.
 *
 * Read-process-write in one Kafka transaction per batch: the copies and the consumed runs offset
 * commit together, so after a crash the group resumes exactly after the last batch whose copies
 * read_committed readers (the alert subscriber) see, and an aborted batch's copies are never seen.
 *
 * One transactional id per group, so one projector copies at a time: whoever takes the partitions
 * over registers the id, fencing the previous holder and aborting its open transaction, and only
 * then reads the committed offsets; a fenced projector stops (`ended`). Not one id per runs
 * partition, as the guard service has: the copy topics are shared by every runs partition, and
 * kafkajs's read_committed consumers expect aborted transactions sorted by first offset, which only
 * one producer's (never overlapping) transactions guarantee.
 *
 * What is copied (copies-of-batch.ts) is what counts for the run's stream by the batch rule
 * (run-batch-fold.ts), so a batch that lost to another writer never yields a stop. Records of
 * unconditional appends (EventStore.append, no batch header) publish their own copies.
 */
import type { Admin, Consumer, EachBatchPayload, Producer, RecordMetadata } from 'kafkajs';
import { UnavailableError } from '../../domain/errors.js';
import { TOPICS } from '../event-log.js';
import type { EventStore } from '../event-store.js';
import { copiesOfBatch } from './copies-of-batch.js';
import { runHeads } from './counted-run-records.js';
import { withTimeout } from './kafka-error.js';
import type { KafkaLog } from './kafka-log.js';
import type { RunHead } from './run-batch-fold.js';
import { fetchTopicOffsets } from './topic-registry.js';
import { transactionalProducer } from './transactional-producer.js';

const DEFAULT_COPY_GROUP = 'loopguard-copies';

/**
 * Where a batch of a runs partition is, for tests to stop the process at or to trace: taken up
 * (this process holds the partition), left to whoever owns the partition since a rebalance,
 * copies sent inside the open transaction, committed.
 */
type CopyStep = 'batch' | 'raced' | 'copies-sent' | 'committed';

export interface KafkaCopyProjectorOptions {
  readonly log: KafkaLog;
  readonly events: EventStore;
  /** The consumer group; `loopguard-copies.<physical runs topic>` by default. */
  readonly groupId?: string;
  readonly sessionTimeoutMs?: number;
  readonly onLog?: (line: string) => void;
  readonly onStep?: (step: CopyStep, partition: number) => void;
}

/** What this process holds after a takeover: every run's head per assigned partition, up to `committed`. */
interface Owned {
  readonly producer: Producer;
  readonly heads: Map<number, Map<string, RunHead>>;
  readonly committed: Map<number, number>;
}

export class KafkaCopyProjector {
  private owned: Promise<Owned> | undefined;
  /** Bumped on every rebalance: a batch fetched before it must not use a takeover made after it. */
  private generation = 0;
  private fenced = false;
  private assigned: readonly number[] = [];
  private end: (why: string) => void = () => {};
  /** Resolves (with the reason) when another projector fenced this one, which then stops. */
  readonly ended = new Promise<string>((resolve) => {
    this.end = resolve;
  });
  /** Copies committed by this process. */
  copied = 0;
  /**
   * Copies this process committed that no read_committed reader may see yet: per copy topic and
   * partition, the first offset of the last committed transaction there. A commit returns before
   * its markers reach the copy partitions; until then the partition's last stable offset stays at
   * or below that offset. Only committed transactions are recorded (an aborted one's copies never
   * become visible); an entry goes once the last stable offset passed it.
   */
  private readonly unseen = new Map<string, { topic: string; partition: number; first: number }>();

  private constructor(
    private readonly opts: KafkaCopyProjectorOptions,
    private readonly consumer: Consumer,
    private readonly admin: Admin,
    private readonly topic: string,
    private readonly groupId: string,
  ) {}

  static async start(opts: KafkaCopyProjectorOptions): Promise<KafkaCopyProjector> {
    const { log } = opts;
    const runs = await log.prepare(TOPICS.runs);
    for (const t of [TOPICS.stops, TOPICS.ledger, TOPICS.dlq]) await log.prepare(t);
    // Named after the runs topic: each set of topics on a shared cluster has its own projector.
    const groupId = opts.groupId ?? `${DEFAULT_COPY_GROUP}.${runs.name}`;
    const sessionTimeout = opts.sessionTimeoutMs ?? 10_000;
    const admin = log.kafka.admin();
    await admin.connect();
    const consumer = log.consumer({
      groupId,
      sessionTimeout,
      heartbeatInterval: Math.max(500, Math.floor(sessionTimeout / 5)),
      maxWaitTimeInMs: 100,
      readUncommitted: false,
    });
    const p = new KafkaCopyProjector(opts, consumer, admin, runs.name, groupId);
    consumer.on(consumer.events.GROUP_JOIN, (e) => p.rebalanced(e.payload.memberAssignment[runs.name] ?? []));
    consumer.on(consumer.events.END_BATCH_PROCESS, (e) => p.passed(e.payload));
    try {
      await consumer.connect();
      await consumer.subscribe({ topics: [runs.name], fromBeginning: true });
      await consumer.run({
        autoCommit: false,
        // Offsets are resolved only once their transaction committed: an unresolved batch is fetched again.
        eachBatchAutoResolve: false,
        // One producer, one open transaction at a time: batches go one after another.
        partitionsConsumedConcurrently: 1,
        eachBatch: (payload) => p.onBatch(payload),
      });
    } catch (e) {
      await p.stop();
      throw e;
    }
    return p;
  }

  /**
   * Resolves once the group's committed offsets (or this process's position past records with
   * nothing to copy) reach the ends the runs partitions had when it was called, and every copy
   * this process committed is visible to read_committed readers. Settles within `timeoutMs`
   * whatever the broker does (an UnavailableError naming what it waited for); a fenced projector's
   * rejects at once.
   */
  async caughtUp(timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const left = (): number => Math.max(1, deadline - Date.now());
    const bounded = <T>(work: Promise<T>, what: string): Promise<T> =>
      withTimeout(work, left(), `copy projector: ${what} (waiting for it to catch up)`);
    this.assertNotFenced();
    const ends = await bounded(fetchTopicOffsets(this.admin, this.topic), 'runs end offsets');
    let noted = false;
    for (;;) {
      this.assertNotFenced();
      const committed = await bounded(this.groupOffsets(), 'group offsets');
      const local = await bounded(
        this.owned?.catch(() => undefined) ?? Promise.resolve(undefined),
        'takeover',
      );
      const behind = ends.filter((e) => {
        const at = Math.max(committed(e.partition), local?.committed.get(e.partition) ?? -1);
        return Number(e.high) > Number(e.low) && at < Number(e.high);
      });
      const hidden = behind.length === 0 ? await bounded(this.hiddenCopies(), 'copy partition offsets') : [];
      if (behind.length === 0 && hidden.length === 0) return;
      if (hidden.length > 0 && !noted) {
        noted = true;
        this.opts.onLog?.(`copies: waiting for commit markers: ${hidden.join(', ')}`);
      }
      if (Date.now() >= deadline)
        throw new UnavailableError(
          'timeout',
          behind.length > 0
            ? `copy projector: runs partitions ${behind.map((b) => b.partition).join(',')} not copied within ${timeoutMs} ms`
            : `copy projector: committed copies not visible to read_committed readers within ${timeoutMs} ms (their commit markers not written): ${hidden.join(', ')}`,
        );
      await new Promise((r) => setTimeout(r, Math.min(100, left())));
    }
  }

  private assertNotFenced(): void {
    if (this.fenced)
      throw new UnavailableError(
        'log_unavailable',
        `copy projector: fenced by another projector of group ${this.groupId}, which copies from here on; this one copies nothing more`,
      );
  }

  /**
   * The committed copies whose partition's last stable offset (the read_committed end offset
   * the admin client's ListOffsets answers) has not passed them yet, as `topic/partition at
   * offset (stable to N)`; forgets those it passed.
   */
  private async hiddenCopies(): Promise<string[]> {
    const hidden: string[] = [];
    for (const topic of new Set([...this.unseen.values()].map((u) => u.topic))) {
      const stable = await fetchTopicOffsets(this.admin, topic);
      for (const [key, u] of this.unseen) {
        if (u.topic !== topic) continue;
        const lso = Number(stable.find((o) => o.partition === u.partition)?.high ?? -1);
        if (lso > u.first) this.unseen.delete(key);
        else hidden.push(`${topic}/${u.partition} at ${u.first} (stable to ${lso})`);
      }
    }
    return hidden;
  }

  async stop(): Promise<void> {
    await this.consumer.disconnect().catch(() => undefined);
    await this.drop();
    await this.admin.disconnect().catch(() => undefined);
  }

  /**
   * A fetched batch of transaction markers and aborted records only (the guard service writes
   * runs in transactions) never reaches onBatch; when it follows what was committed, it is passed
   * here, in memory: there is nothing in it to copy.
   */
  private passed(b: {
    partition: number;
    batchSize: number;
    firstOffset: string | null;
    lastOffset: string;
  }): void {
    if (b.batchSize !== 0 || b.firstOffset === null) return;
    const first = Number(b.firstOffset);
    void this.owned
      ?.then((o) => {
        const at = o.committed.get(b.partition);
        if (at !== undefined && at >= first)
          o.committed.set(b.partition, Math.max(at, Number(b.lastOffset) + 1));
      })
      .catch(() => undefined);
  }

  /** Every rebalance drops what this process held: a partition may have moved meanwhile. */
  private rebalanced(assigned: readonly number[]): void {
    this.generation++;
    this.assigned = [...assigned].sort((a, b) => a - b);
    this.opts.onLog?.(`copies: assigned runs partitions [${this.assigned.join(',')}]`);
    // A fenced projector is stopping, and its consumer may join the group once more before it
    // has left: registering the id again would fence the projector that copies now, which would
    // then stop too, and nothing would copy.
    if (this.fenced) return;
    void this.drop();
    // Fence a previous holder at once rather than on the first batch.
    this.own().catch(() => undefined);
  }

  private async drop(): Promise<void> {
    const old = this.owned;
    this.owned = undefined;
    await old?.then((o) => o.producer.disconnect()).catch(() => undefined);
  }

  private own(): Promise<Owned> {
    if (this.fenced)
      return Promise.reject(
        new UnavailableError(
          'log_unavailable',
          `copy projector: fenced by another projector of group ${this.groupId}`,
        ),
      );
    if (this.owned === undefined) {
      const o = this.takeOver(this.assigned);
      this.owned = o;
      o.catch(() => {
        if (this.owned === o) this.owned = undefined;
      });
    }
    return this.owned;
  }

  /** Fences the previous holder, then folds the run heads of each partition up to its committed offset. */
  private async takeOver(assigned: readonly number[]): Promise<Owned> {
    const producer = await transactionalProducer(this.opts.log, `${this.groupId}.${this.topic}`);
    try {
      const groupAt = await this.groupOffsets();
      const lows = await fetchTopicOffsets(this.admin, this.topic);
      const heads = new Map<number, Map<string, RunHead>>();
      const committed = new Map<number, number>();
      for (const partition of assigned) {
        const at = Math.max(0, groupAt(partition));
        const low = Number(lows.find((o) => o.partition === partition)?.low ?? 0);
        const runs = await runHeads(this.opts.log, partition, low, at, 60_000);
        heads.set(partition, runs);
        committed.set(partition, at);
        this.opts.onLog?.(`copies: runs partition ${partition}: ${runs.size} runs folded, from offset ${at}`);
      }
      return { producer, heads, committed };
    } catch (e) {
      await producer.disconnect().catch(() => undefined);
      throw e;
    }
  }

  /** The group's committed offset of each runs partition (-1: none). */
  private async groupOffsets(): Promise<(partition: number) => number> {
    const [got] = await this.admin.fetchOffsets({ groupId: this.groupId, topics: [this.topic] });
    return (partition) => Number(got?.partitions.find((p) => p.partition === partition)?.offset ?? '-1');
  }

  private async onBatch({ batch, isRunning, isStale, resolveOffset }: EachBatchPayload): Promise<void> {
    if (this.fenced || !isRunning() || isStale()) return;
    const generation = this.generation;
    const owning = this.own();
    const owned = await owning;
    let heads = owned.heads.get(batch.partition);
    // A batch that raced a rebalance: left unresolved for whoever owns the partition now.
    if (generation !== this.generation || heads === undefined) {
      this.opts.onStep?.('raced', batch.partition);
      return;
    }
    this.opts.onStep?.('batch', batch.partition);
    const committed = owned.committed.get(batch.partition) ?? 0;
    const messages = batch.messages.filter((m) => Number(m.offset) >= committed);
    if (messages.length === 0) {
      resolveOffset(batch.lastOffset());
      return;
    }
    const next = Number(batch.lastOffset()) + 1;
    // The heads move only once the transaction committed.
    heads = new Map(heads);
    const out = await copiesOfBatch(
      { events: this.opts.events, log: this.opts.log, runsTopic: this.topic, partition: batch.partition },
      messages,
      heads,
    );
    const topicMessages = [...out].map(([topic, msgs]) => ({ topic, messages: msgs }));
    const txn = await owned.producer.transaction();
    let sent: RecordMetadata[] = [];
    try {
      if (topicMessages.length > 0) sent = await txn.sendBatch({ topicMessages, acks: -1 });
      this.opts.onStep?.('copies-sent', batch.partition);
      await txn.sendOffsets({
        consumerGroupId: this.groupId,
        topics: [{ topic: this.topic, partitions: [{ partition: batch.partition, offset: String(next) }] }],
      });
      await txn.commit();
    } catch (e) {
      await txn.abort().catch(() => undefined);
      if (this.owned === owning) this.owned = undefined;
      await owned.producer.disconnect().catch(() => undefined);
      if (isFenced(e)) {
        // Another projector registered the id: it copies from here on; taking it back would
        // fence it in turn, and the two would take turns failing.
        this.fenced = true;
        this.opts.onLog?.('copies: fenced by another projector of the group; stopping');
        setImmediate(() => void this.stop().then(() => this.end('fenced by another projector')));
        return;
      }
      this.opts.onLog?.(
        `copies: runs partition ${batch.partition}: transaction aborted: ${(e as Error).message}`,
      );
      throw e;
    }
    this.opts.onStep?.('committed', batch.partition);
    owned.heads.set(batch.partition, heads);
    owned.committed.set(batch.partition, next);
    // Committed, so the marker will be written: caughtUp waits until the stable offset passed it.
    for (const m of sent) {
      const key = `${m.topicName}/${m.partition}`;
      const first = Math.max(Number(m.baseOffset), this.unseen.get(key)?.first ?? -1);
      this.unseen.set(key, { topic: m.topicName, partition: m.partition, first });
    }
    this.copied += topicMessages.reduce((n, t) => n + t.messages.length, 0);
    resolveOffset(batch.lastOffset());
  }
}

/** The broker's answer to a producer whose transactional id was registered again elsewhere. */
function isFenced(e: unknown): boolean {
  const type = (e as { type?: unknown }).type;
  return type === 'INVALID_PRODUCER_EPOCH' || type === 'PRODUCER_FENCED';
}
