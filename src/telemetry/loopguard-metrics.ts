import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { type RecordedEvent, TERMINAL_STATES } from '../domain/index.js';
import { OTHER, ruleLabel, TOOL_LABEL_CAP, ToolLabels } from './bounded-labels.js';
import type { GuardMetrics } from './guard-telemetry-ports.js';

/**
 * The guard's Prometheus metrics, in a registry of their own (created by whoever runs the guard
 * and handed in, never a module global). Labels are bounded sets: decisions, rules (the guard's
 * own, else `other`), terminal states, tool names (the first TOOL_LABEL_CAP, then `other`),
 * topics and partitions; never run ids or arguments.
 */
export class LoopguardMetrics implements GuardMetrics {
  private readonly decisions: Counter<'decision' | 'rule'>;
  private readonly stops: Counter<'terminal_state' | 'rule'>;
  private readonly guardTime: Histogram;
  private readonly toolTime: Histogram<'tool'>;
  private readonly inDoubt: Gauge;
  private readonly lag: Gauge<'topic' | 'partition'>;
  // Operation keys in doubt as this process saw them: the gauge is their count.
  private readonly doubtful = new Set<string>();
  private readonly tools: ToolLabels;

  constructor(
    readonly registry: Registry = new Registry(),
    toolLabelCap = TOOL_LABEL_CAP,
  ) {
    this.tools = new ToolLabels(toolLabelCap);
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
          this.decisions.inc({ decision: e.decision, rule: ruleLabel(e.rule) });
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
    // A report read back from Kafka is a client's word: its state is labelled only if it is one.
    const state = (TERMINAL_STATES as readonly string[]).includes(terminalState) ? terminalState : OTHER;
    this.stops.inc({ terminal_state: state, rule: ruleLabel(rule) });
  }

  guardSeconds(seconds: number): void {
    this.guardTime.observe(seconds);
  }

  toolSeconds(tool: string, seconds: number): void {
    this.toolTime.observe({ tool: this.tools.label(tool) }, seconds);
  }

  consumerLag(topic: string, partition: number, lag: number): void {
    this.lag.set({ topic, partition: String(partition) }, lag);
  }

  /** The Prometheus text exposition of every metric in the registry. */
  text(): Promise<string> {
    return this.registry.metrics();
  }
}
