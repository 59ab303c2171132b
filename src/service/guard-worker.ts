/**
 * `loopguard serve`: a guard worker in a Kafka consumer group on loopguard.requests. For each
 * batch of one partition it decides every request with the run's actor (the library's decider),
 * then writes the runs' events, the decisions and the consumed offsets in ONE Kafka transaction
 * (read-process-write): either all of it is visible to read_committed readers or none of it is.
 *
 * Fencing. Each requests partition has its own transactional id (group + topic + partition), so
 * the worker that takes a partition over bumps the producer epoch of whoever held it before: a
 * zombie (paused, cut off, killed mid-transaction) can commit nothing more, and its open
 * transaction is aborted. Only after that does the new owner read the committed offset (a zombie's
 * commit may have landed after the group handed out the stale one) and load the partition's runs.
 *
 * Snapshots. A batch may carry a snapshot of its partition's runs (batch-transaction.ts), its place
 * kept in the offset commit's metadata (snapshot-pointer.ts): a takeover reads it and the records since.
 */
import { randomUUID } from 'node:crypto';
import type { Consumer, EachBatchPayload, Producer, Transaction } from 'kafkajs';
import { DEFAULT_POLICY, LoopguardError, type Policy } from '../domain/index.js';
import { TOPICS } from '../log/event-log.js';
import { kafkaError } from '../log/kafka/kafka-error.js';
import { KafkaLedger } from '../log/kafka/kafka-ledger.js';
import { transactionalProducer } from '../log/kafka/transactional-producer.js';
import type { Clock } from '../machines/index.js';
import { chooseSecretKey } from '../runtime/secret-key.js';
import type { SnapshotPointer } from '../snapshots/index.js';
import type { LoopguardMetrics } from '../telemetry/index.js';
import { BatchBackoff } from './batch-backoff.js';
import { type BatchTransactionContext, type SnapshotWritten, writeBatch } from './batch-transaction.js';
import { startNewPartitions } from './group-start.js';
import { loadPartition } from './load-partition.js';
import type { ServiceConnection } from './open-service.js';
import type { PartitionRuns } from './partition-runs.js';
import { type BatchContext, type BatchOutput, processBatch } from './process-batch.js';
import { recallSignatures } from './recall-signatures.js';
import { type OpenedRunsContext, openRunsContext, type RunsContext } from './runs-context.js';
import { SERVICE_TOPICS } from './service-topics.js';
import { type TenantKey, tenancyNote } from './tenant-keys.js';
import { SeenSignatures } from './tenant-replays.js';
import { WorkerStats } from './worker-stats.js';

export interface GuardWorkerOptions
  extends Pick<ServiceConnection, 'log' | 'events' | 'requests' | 'decisions'> {
  readonly groupId: string;
  /** Names this worker in its decisions; unique per process. */
  readonly workerId?: string;
  readonly policy?: Policy;
  readonly clock?: Clock;
  readonly secretKey?: string;
  readonly sessionTimeoutMs?: number;
  /**
   * Runs records a partition writes before the next snapshot of it; at least as many as the runs
   * it holds, so a snapshot's cost is paid back by the tail it saves. Default 1000.
   */
  readonly snapshotEveryRecords?: number;
  /**
   * An ended run not asked for in this long is put aside at the next snapshot: out of memory and
   * out of the partition's snapshots, into a record of its own that a later request reads back.
   * Default 10 minutes, by `clock`.
   */
  readonly endedRunsIdleMs?: number;
  /** Where the worker's metrics go (default: a registry of its own, read through `stats`). */
  readonly metrics?: LoopguardMetrics;
  readonly onLog?: (line: string) => void;
  /**
   * A group with no committed offset on a requests partition decides the requests already there
   * (else it starts at the partition's end when the worker starts: group-start.ts).
   */
  readonly fromBeginning?: boolean;
  /**
   * Per-tenant credentials (tenant-keys.ts): every request must be signed with one, and acts only
   * on its tenant's runs and operations. Without them every client may act on every run.
   */
  readonly tenantKeys?: ReadonlyMap<string, TenantKey>;
}

interface Owned {
  readonly producer: Producer;
  readonly runs: PartitionRuns;
  committed: number;
  /** The newest committed snapshot, carried in every offset commit. */
  pointer: SnapshotPointer | null;
  /** Runs records written (or read at the takeover) since that snapshot. */
  sinceSnapshot: number;
}

export class GuardWorker {
  readonly stats: WorkerStats;
  readonly workerId: string;
  private owned = new Map<number, Promise<Owned>>();
  /** Bumped on every rebalance: a batch fetched before it must not take a partition over after it. */
  private generation = 0;
  private readonly ctx: RunsContext;
  private readonly backoff: BatchBackoff;
  /** Signed requests decided in the signature window, across partitions (replay protection). */
  private readonly replays = new SeenSignatures();

  private constructor(
    private readonly opts: GuardWorkerOptions,
    private readonly consumer: Consumer,
    private readonly opened: OpenedRunsContext,
    private readonly topic: string,
    private readonly ledger: KafkaLedger,
  ) {
    this.workerId = opts.workerId ?? `worker-${randomUUID().slice(0, 8)}`;
    this.stats = new WorkerStats(opts.metrics);
    this.ctx = { ...opened.ctx, note: (line) => this.say(line) };
    this.backoff = new BatchBackoff(this.stats, (line) => this.say(line));
  }

  private say(line: string): void {
    this.opts.onLog?.(`${this.workerId}: ${line}`);
  }

  static async start(opts: GuardWorkerOptions): Promise<GuardWorker> {
    // Every worker must hash secrets with the same key, so a shared log requires one.
    const secretKey = chooseSecretKey(opts.secretKey, { kind: 'shared', where: 'loopguard serve' });
    const { log } = opts;
    // Every topic a worker reads and writes (TopicRegistry retries a creation race briefly).
    for (const t of [TOPICS.runs, TOPICS.dlq, ...Object.values(SERVICE_TOPICS)]) await log.prepare(t);
    const topic = log.physicalName(SERVICE_TOPICS.requests);
    const ledger = await KafkaLedger.open({
      log,
      schemaStore: opts.events.schemas,
      subject: opts.events.subjectFor(TOPICS.ledger),
    });
    const opened = await openRunsContext(opts, { group: opts.groupId, secretKey, clock: opts.clock });
    const { admin } = opened.ctx;
    opts.onLog?.(tenancyNote(opts.tenantKeys));
    const note = await startNewPartitions(admin, opts.groupId, topic, opts.fromBeginning ?? false);
    if (note !== null) opts.onLog?.(note);
    const consumer = log.consumer({
      groupId: opts.groupId,
      sessionTimeout: opts.sessionTimeoutMs ?? 10_000,
      heartbeatInterval: Math.max(500, Math.floor((opts.sessionTimeoutMs ?? 10_000) / 5)),
      maxWaitTimeInMs: 50,
      readUncommitted: false,
    });
    const worker = new GuardWorker(opts, consumer, opened, topic, ledger);
    consumer.on(consumer.events.GROUP_JOIN, (e) =>
      worker.rebalanced(e.payload.memberAssignment[topic] ?? []),
    );
    // A consumer kafkajs does not restart leaves a process that decides nothing: the log says so.
    consumer.on(consumer.events.CRASH, ({ payload }) =>
      worker.say(
        `consumer crashed: ${payload.error.message}; ${payload.restart ? 'kafkajs restarts it' : 'not restarted: this worker decides nothing more'}`,
      ),
    );
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    const partitions =
      (await admin.fetchTopicMetadata({ topics: [topic] })).topics[0]?.partitions.length ?? 1;
    await consumer.run({
      autoCommit: false,
      // Offsets are resolved only once their transaction committed: an unresolved batch is fetched again.
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: partitions,
      eachBatch: (payload) => worker.onBatch(payload),
    });
    return worker;
  }

  async stop(): Promise<void> {
    await this.consumer.disconnect().catch(() => undefined);
    await this.dropAll();
    await Promise.allSettled([this.opened.close(), this.ledger.close()]);
  }

  private batchContext(): Omit<BatchContext, 'partition'> {
    return {
      requests: this.opts.requests,
      decisions: this.opts.decisions,
      events: this.opts.events,
      log: this.opts.log,
      policy: this.opts.policy ?? DEFAULT_POLICY,
      hashing: this.ctx.deps.hashing,
      ledger: this.ledger,
      clock: this.ctx.clock,
      workerId: this.workerId,
      topic: this.topic,
      ...(this.opts.tenantKeys ? { tenantKeys: this.opts.tenantKeys, replays: this.replays } : {}),
    };
  }

  private transactionContext(): BatchTransactionContext {
    return {
      snapshots: this.ctx.snapshots,
      groupId: this.opts.groupId,
      topic: this.topic,
      runsTopic: this.opts.log.physicalName(TOPICS.runs),
      everyRecords: this.opts.snapshotEveryRecords ?? 1000,
      endedIdleMs: this.opts.endedRunsIdleMs ?? 600_000,
    };
  }

  /** Every rebalance drops every partition's state: what this worker held may have moved meanwhile. */
  private rebalanced(assigned: readonly number[]): void {
    this.stats.rebalanced([...assigned].sort((a, b) => a - b));
    this.generation++;
    this.say(`assigned partitions [${this.stats.assigned.join(',')}]`);
    void this.dropAll();
    // Take every assigned partition over now, not on its first batch: a zombie is fenced at once,
    // and a moved run is loaded before its next request arrives. A failure is retried by that batch.
    for (const p of this.stats.assigned) this.own(p).catch(() => undefined);
  }

  private async dropAll(): Promise<void> {
    const old = [...this.owned.values()];
    this.owned = new Map();
    await Promise.allSettled(old.map(async (o) => (await o).producer.disconnect()));
  }

  private own(partition: number): Promise<Owned> {
    const held = this.owned.get(partition);
    if (held !== undefined) return held;
    const o = this.takeOver(partition);
    this.owned.set(partition, o);
    o.catch(() => {
      if (this.owned.get(partition) === o) this.owned.delete(partition);
    });
    return o;
  }

  private async takeOver(partition: number): Promise<Owned> {
    const started = Date.now();
    const producer = await transactionalProducer(
      this.opts.log,
      `${this.opts.groupId}.${this.topic}.${partition}`,
    );
    try {
      const offsets = await this.ctx.admin.fetchOffsets({ groupId: this.opts.groupId, topics: [this.topic] });
      const at = offsets[0]?.partitions.find((p) => p.partition === partition);
      const committed = Number(at?.offset ?? '-1');
      const { runs, pointer, source } = await loadPartition(this.ctx, partition, at?.metadata);
      if (this.opts.tenantKeys !== undefined) {
        // What the worker before this one decided here, so a replay of it is refused (recall-signatures.ts).
        const now = this.ctx.clock.now();
        const from = { ...this.ctx, requests: this.opts.requests, topic: this.topic };
        this.replays.add(await recallSignatures(from, partition, committed, now), now);
      }
      const ms = Date.now() - started;
      this.stats.tookOver(ms / 1000, pointer !== null);
      this.say(
        `partition ${partition}: fenced, ${runs.size} runs loaded in ${ms} ms from ${source}, from offset ${committed}`,
      );
      return {
        producer,
        runs,
        committed: Math.max(0, committed),
        pointer,
        sinceSnapshot: runs.loaded.runsRead,
      };
    } catch (e) {
      await producer.disconnect().catch(() => undefined);
      throw e;
    }
  }

  private async onBatch(payload: EachBatchPayload): Promise<void> {
    const { batch, isRunning, isStale, resolveOffset } = payload;
    if (!isRunning() || isStale()) return;
    const generation = this.generation;
    const owning = this.own(batch.partition);
    let owned: Owned;
    try {
      owned = await owning;
    } catch (e) {
      // Never thrown to kafkajs (see BatchBackoff.wait); the next attempt takes the partition over afresh.
      await this.backoff.wait(payload, kafkaError(e, `taking partition ${batch.partition} over`));
      return;
    }
    // A rebalance while this batch waited: the partition may be someone else's now. Returning
    // without committing leaves the requests to whoever owns it (this worker, after reloading).
    if (generation !== this.generation) return;
    const messages = batch.messages.filter((m) => Number(m.offset) >= owned.committed);
    if (messages.length === 0) {
      resolveOffset(batch.lastOffset());
      return;
    }
    const next = Number(batch.lastOffset()) + 1;
    let out: BatchOutput;
    try {
      out = await processBatch(messages, owned.runs, { ...this.batchContext(), partition: batch.partition });
    } catch (e) {
      // Nothing of the batch was kept (batch-runs.ts): the same offsets are fetched again.
      if (!(e instanceof LoopguardError && e.retriable)) throw e;
      await this.backoff.wait(payload, e, messages[0]?.offset);
      return;
    }
    let txn: Transaction | undefined;
    let snapshot: SnapshotWritten | null = null;
    try {
      txn = await owned.producer.transaction();
      // The partition's from here: a transaction that fails below drops the partition whole.
      out.apply();
      snapshot = await writeBatch(this.transactionContext(), txn, owned, batch.partition, next, out);
      await txn.commit();
    } catch (e) {
      await txn?.abort().catch(() => undefined);
      // The actors moved ahead of what the log holds: forget them; the next batch reloads.
      if (this.owned.get(batch.partition) === owning) this.owned.delete(batch.partition);
      await owned.producer.disconnect().catch(() => undefined);
      this.stats.aborted();
      this.say(`partition ${batch.partition}: transaction aborted: ${(e as Error).message}`);
      // Not thrown (see BatchBackoff.wait), a fenced producer's error included. Fenced means the
      // partition's id was registered again since: by the worker the partition went to, or by a
      // takeover begun for an older assignment that finished after this worker's own. The group
      // tells which: a heartbeat fails for a worker it no longer counts, and kafkajs rejoins on
      // that error (a zombie takes nothing back); an owner takes the partition back when the
      // batch is fetched again.
      await payload.heartbeat();
      await this.backoff.wait(payload, kafkaError(e, 'committing the batch'));
      return;
    }
    owned.committed = next;
    // Claims the batch gave back, now that its decisions are the partition's. Never if it aborted:
    // a fenced worker frees nothing; the request decided again takes its claim back as its own.
    for (const giveBack of out.afterCommit) await giveBack();
    this.backoff.reset(batch.partition);
    this.replays.add(out.signed, this.ctx.clock.now());
    if (snapshot !== null) {
      owned.pointer = snapshot.pointer;
      owned.sinceSnapshot = 0;
      this.stats.snapshotWritten(snapshot.putAside);
    } else owned.sinceSnapshot += out.recorded.length;
    resolveOffset(batch.lastOffset());
    this.stats.batchDone(out.decided, out.deadLettered);
    for (const reason of out.refused) this.stats.refused(reason);
    this.stats.metrics.observe(out.recorded);
    // The stops and ledger copies are derived from the committed runs records by KafkaCopyProjector.
  }
}
