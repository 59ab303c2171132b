import { type Hashing, type RecordedEvent, redactText } from '../domain/index.js';
import type { CallSpan, CallTracing, GuardMetrics } from './guard-telemetry-ports.js';

export interface TelemetryOptions {
  readonly metrics?: GuardMetrics;
  /** Where the calls' spans go (`otelTracing()` from `loopguard/otel`); none by default. */
  readonly tracing?: CallTracing;
  /** Seconds on a monotonic clock; performance.now by default. */
  readonly seconds?: () => number;
  /**
   * The guard's hashing: a tool's error code is set on a span redacted as the run records it, so
   * a trace backend never holds a secret the log does not. Without it the code goes as given.
   */
  readonly hashing?: Hashing;
}

/** How one guarded call ended, for its span. */
export interface CallEnd {
  readonly rule: string | null;
  /** Set when the call failed: the tool's error code or result class, or the thrown error's code. */
  readonly errorType: string | null;
}

/** A guard without tracing: its spans record nothing and cost nothing. */
const NO_SPAN: CallSpan = {
  setAttribute: () => undefined,
  setError: () => undefined,
  runInside: (work) => work(),
  end: () => undefined,
};
const NO_TRACING: CallTracing = { startSpan: () => NO_SPAN };

/** One guarded call being observed: its span (GenAI `execute_tool`) and its guard and tool time. */
export class CallObservation {
  private readonly started: number;
  private toolTime = 0;

  constructor(
    private readonly t: GuardTelemetry,
    private readonly span: CallSpan,
    private readonly tool: string,
  ) {
    this.started = t.seconds();
  }

  /** The call got its id. */
  named(callId: string): void {
    this.span.setAttribute('gen_ai.tool.call.id', callId);
  }

  /** The decision before the call: whether the tool runs. */
  decided(decision: string): void {
    this.span.setAttribute('loopguard.decision', decision);
  }

  /** Runs the tool inside the call's span, so spans the tool opens are its children. */
  async runTool<T>(run: () => Promise<T>): Promise<T> {
    const from = this.t.seconds();
    try {
      return await this.span.runInside(run);
    } finally {
      this.toolTime = this.t.seconds() - from;
      this.t.metrics?.toolSeconds(this.tool, this.toolTime);
    }
  }

  end(e: CallEnd): void {
    this.t.metrics?.guardSeconds(Math.max(0, this.t.seconds() - this.started - this.toolTime));
    if (e.rule !== null) this.span.setAttribute('loopguard.rule', e.rule);
    if (e.errorType !== null) {
      this.span.setAttribute('error.type', this.t.redacted(e.errorType));
      this.span.setError();
    }
    this.span.end();
  }
}

/**
 * What the runtime reports while it guards: durable events to the metrics, and one span per
 * guarded call following the OpenTelemetry GenAI conventions for tool execution.
 */
export class GuardTelemetry {
  readonly metrics: GuardMetrics | undefined;
  readonly seconds: () => number;
  private readonly tracing: CallTracing;
  private readonly hashing: Hashing | undefined;

  constructor(opts: TelemetryOptions = {}) {
    this.metrics = opts.metrics;
    this.hashing = opts.hashing;
    this.tracing = opts.tracing ?? NO_TRACING;
    this.seconds = opts.seconds ?? (() => performance.now() / 1000);
  }

  /** A code as the run records it (see TelemetryOptions.hashing). */
  redacted(code: string): string {
    return this.hashing === undefined ? code : redactText(code, this.hashing);
  }

  recorded(records: readonly RecordedEvent[]): void {
    this.metrics?.observe(records);
  }

  /**
   * Observes one guarded call from start to end; `outcome` reads the rule and failure off its
   * result, and a thrown error ends the span with the error's code.
   */
  async observeCall<T>(
    runId: string,
    tool: string,
    body: (obs: CallObservation) => Promise<T>,
    outcome: (result: T) => CallEnd,
  ): Promise<T> {
    const span = this.tracing.startSpan(`execute_tool ${tool}`, {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': tool,
      'loopguard.run_id': runId,
    });
    const obs = new CallObservation(this, span, tool);
    try {
      const r = await body(obs);
      obs.end(outcome(r));
      return r;
    } catch (e) {
      const code = (e as { code?: unknown }).code;
      obs.end({ rule: null, errorType: typeof code === 'string' ? code : 'error' });
      throw e;
    }
  }
}
