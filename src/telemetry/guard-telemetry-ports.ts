import type { RecordedEvent } from '../domain/index.js';

/**
 * What a guard reports to, as ports: the root library needs neither prom-client nor
 * OpenTelemetry. `LoopguardMetrics` (`loopguard/metrics`, on prom-client) is the metrics adapter,
 * `otelTracing()` (`loopguard/otel`, on `@opentelemetry/api`) the tracing one; without them a
 * guard counts nothing and opens no span.
 */
export interface GuardMetrics {
  /** Durable events, as recorded: decisions, stops, operations in doubt. */
  observe(records: readonly RecordedEvent[]): void;
  /** The guard's own time of one guarded call, the tool's time excluded. */
  guardSeconds(seconds: number): void;
  toolSeconds(tool: string, seconds: number): void;
  /** The metrics in the Prometheus text format. */
  text(): Promise<string>;
}

/** Opens one span per guarded call (the OpenTelemetry GenAI `execute_tool` span). */
export interface CallTracing {
  startSpan(name: string, attributes: Readonly<Record<string, string>>): CallSpan;
}

export interface CallSpan {
  setAttribute(key: string, value: string): void;
  /** Marks the span failed (an error status). */
  setError(): void;
  /** Runs `work` with this span active, so spans the tool opens are its children. */
  runInside<T>(work: () => Promise<T>): Promise<T>;
  end(): void;
}
