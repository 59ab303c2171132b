import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { RecordedEvent } from '../domain/index.js';

/** The label for "no rule": a decision without one still needs a label value. */
const NONE = 'none';

/**
 * The guard's Prometheus metrics, in a registry of their own (created by whoever runs the guard
 * and handed in, never a module global). Labels are bounded sets: decisions, rules, terminal
 * states, tool names, topics and partitions; never run ids or arguments.
 */
export class LoopguardMetrics {
  private readonly decisions: Counter<'decision' | 'rule'>;
  private readonly stops: Counter<'terminal_state' | 'rule'>;
  private readonly guardTime: Histogram;
  private readonly toolTime: Histogram<'tool'>;
  private readonly inDoubt: Gauge;
  private readonly lag: Gauge<'topic' | 'partition'>;
  // Operation keys in doubt as this process saw them: the gauge is their count.
  private readonly doubtful = new Set<string>();

  constructor(readonly registry: Registry = new Registry()) {
    const registers = [registry];
    this.decisions = new Counter({
      name: 'loopguard_decisions_total',
      help: 'Guard decisions recorded, by decision and rule (rule "none" when no rule fired).',
      labelNames: ['decision', 'rule'],
      registers,
    });
    this.stops = new Counter({
      name: 'loopguard_stops_total',
      help: 'Runs that ended, by terminal state and the rule or reason that ended them.',
      labelNames: ['terminal_state', 'rule'],
      registers,
    });
    this.guardTime = new Histogram({
      name: 'loopguard_guard_seconds',
      help: "The guard's own time per guarded call: deciding and recording, the tool's time excluded.",
      buckets: [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5],
      registers,
    });
    this.toolTime = new Histogram({
      name: 'loopguard_tool_seconds',
      help: 'Time a tool took to run, by tool.',
      labelNames: ['tool'],
      buckets: [0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
      registers,
    });
    this.inDoubt = new Gauge({
      name: 'loopguard_operations_in_doubt',
      help: 'Side-effecting operations whose outcome is unknown, waiting for reconcile or a person.',
      registers,
    });
    this.lag = new Gauge({
      name: 'loopguard_consumer_lag',
      help: 'Records a Kafka reader still has to read, by topic and partition.',
      labelNames: ['topic', 'partition'],
      registers,
    });
  }

  /** Counts what durable events say: decisions, stops, operations going into and out of doubt. */
  observe(records: readonly RecordedEvent[]): void {
    for (const { event: e } of records) {
      switch (e.type) {
        case 'GuardDecided':
          this.decisions.inc({ decision: e.decision, rule: e.rule ?? NONE });
          break;
        case 'RunStopped':
          this.stopped(e.report.terminalState, e.report.guardReason);
          break;
        case 'OperationInDoubt':
          this.doubtful.add(e.operationKey);
          this.inDoubt.set(this.doubtful.size);
          break;
        case 'OperationCompleted':
        case 'OperationReleased':
          if (this.doubtful.delete(e.operationKey)) this.inDoubt.set(this.doubtful.size);
          break;
      }
    }
  }

  /** A run that ended: counted where the guard records it, and where `loopguard alert` delivers it. */
  stopped(terminalState: string, rule: string): void {
    this.stops.inc({ terminal_state: terminalState, rule: rule || NONE });
  }

  guardSeconds(seconds: number): void {
    this.guardTime.observe(seconds);
  }

  toolSeconds(tool: string, seconds: number): void {
    this.toolTime.observe({ tool }, seconds);
  }

  consumerLag(topic: string, partition: number, lag: number): void {
    this.lag.set({ topic, partition: String(partition) }, lag);
  }

  /** The Prometheus text exposition of every metric in the registry. */
  text(): Promise<string> {
    return this.registry.metrics();
  }
}
