/** What a worker has done, for `--metrics-port` and for tests; plain counters, no clock. */
export class WorkerStats {
  decided = 0;
  deadLettered = 0;
  aborted = 0;
  rebalances = 0;
  assigned: number[] = [];

  /** Prometheus text exposition format. */
  prometheus(workerId: string): string {
    const label = `{worker="${workerId.replace(/["\\\n]/g, '_')}"}`;
    return [
      '# TYPE loopguard_serve_decisions_total counter',
      `loopguard_serve_decisions_total${label} ${this.decided}`,
      '# TYPE loopguard_serve_dead_lettered_total counter',
      `loopguard_serve_dead_lettered_total${label} ${this.deadLettered}`,
      '# TYPE loopguard_serve_transactions_aborted_total counter',
      `loopguard_serve_transactions_aborted_total${label} ${this.aborted}`,
      '# TYPE loopguard_serve_rebalances_total counter',
      `loopguard_serve_rebalances_total${label} ${this.rebalances}`,
      '# TYPE loopguard_serve_assigned_partitions gauge',
      `loopguard_serve_assigned_partitions${label} ${this.assigned.length}`,
      '',
    ].join('\n');
  }
}
