import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { LoopguardMetrics } from '../telemetry/index.js';

/**
 * What a worker has done. The guard's own metrics (decisions by rule, stops, operations in doubt)
 * come from the events the worker recorded, through the same LoopguardMetrics the library and
 * `alert` use; the counters here are the ones only a worker has. One registry holds both, so
 * `--metrics-port` serves one page. The plain numbers stay readable for logs and tests.
 */
export class WorkerStats {
  decided = 0;
  deadLettered = 0;
  assigned: readonly number[] = [];
  snapshots = 0;
  putAside = 0;
  private readonly decidedTotal: Counter;
  private readonly deadLetteredTotal: Counter;
  private readonly abortedTotal: Counter;
  private readonly rebalancesTotal: Counter;
  private readonly assignedGauge: Gauge;
  private readonly snapshotsTotal: Counter;
  private readonly putAsideTotal: Counter;
  private readonly takeoverSeconds: Histogram<'from'>;
  private readonly dependencyRetriesTotal: Counter<'code'>;
  dependencyRetries = 0;
  private readonly refusedTotal: Counter<'reason'>;
  readonly refusals = new Map<string, number>();

  constructor(readonly metrics: LoopguardMetrics = new LoopguardMetrics()) {
    const registers: Registry[] = [metrics.registry];
    const counter = <L extends string = never>(name: string, help: string, ...labelNames: L[]) =>
      new Counter<L>({ name, help, labelNames, registers });
    this.decidedTotal = counter(
      'loopguard_serve_requests_decided_total',
      'Requests this worker answered on loopguard.decisions (errors included).',
    );
    this.deadLetteredTotal = counter(
      'loopguard_serve_dead_lettered_total',
      'Requests that could not be decoded, sent to loopguard.dlq.',
    );
    this.abortedTotal = counter(
      'loopguard_serve_transactions_aborted_total',
      'Batch transactions aborted (their requests are decided again by the partition owner).',
    );
    this.rebalancesTotal = counter(
      'loopguard_serve_rebalances_total',
      'Consumer-group rebalances this worker took part in.',
    );
    this.assignedGauge = new Gauge({
      name: 'loopguard_serve_assigned_partitions',
      help: 'Partitions of loopguard.requests this worker owns now.',
      registers,
    });
    this.snapshotsTotal = counter(
      'loopguard_serve_snapshots_total',
      'Partition snapshots this worker committed to loopguard.worker-snapshots.',
    );
    this.putAsideTotal = counter(
      'loopguard_serve_runs_put_aside_total',
      'Ended runs that left memory and the partition snapshots for a record of their own.',
    );
    this.takeoverSeconds = new Histogram({
      name: 'loopguard_serve_takeover_seconds',
      help: "From assignment to the partition's runs loaded, by what the load started from.",
      labelNames: ['from'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    this.dependencyRetriesTotal = counter(
      'loopguard_serve_dependency_retries_total',
      'Batches put back because a dependency did not answer (registry, log), by error code.',
      'code',
    );
    this.refusedTotal = counter(
      'loopguard_serve_requests_refused_total',
      "Requests refused before they were decided: unauthenticated, expired (signed outside the window), replayed, misrouted (published to another requests partition than the run id's), cross_tenant (another tenant's run or operation), not_approver.",
      'reason',
    );
  }

  /** `reason` is one of tenant-guard.ts's RefusedFor: a fixed set. */
  refused(reason: string): void {
    this.refusals.set(reason, (this.refusals.get(reason) ?? 0) + 1);
    this.refusedTotal.inc({ reason });
  }

  /** `code` is one of loopguard's retriable error codes: a fixed set. */
  dependencyRetried(code: string): void {
    this.dependencyRetries++;
    this.dependencyRetriesTotal.inc({ code });
  }

  snapshotWritten(putAside: number): void {
    this.snapshots++;
    this.snapshotsTotal.inc();
    this.putAside += putAside;
    this.putAsideTotal.inc(putAside);
  }

  tookOver(seconds: number, fromSnapshot: boolean): void {
    this.takeoverSeconds.observe({ from: fromSnapshot ? 'snapshot' : 'runs' }, seconds);
  }

  batchDone(decided: number, deadLettered: number): void {
    this.decided += decided;
    this.deadLettered += deadLettered;
    this.decidedTotal.inc(decided);
    this.deadLetteredTotal.inc(deadLettered);
  }

  aborted(): void {
    this.abortedTotal.inc();
  }

  rebalanced(assigned: readonly number[]): void {
    this.assigned = assigned;
    this.rebalancesTotal.inc();
    this.assignedGauge.set(assigned.length);
  }
}
