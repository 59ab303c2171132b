import { context, SpanKind, SpanStatusCode, type Tracer, trace } from '@opentelemetry/api';
import type { CallSpan, CallTracing } from './guard-telemetry-ports.js';

/**
 * The guard's spans on OpenTelemetry: `createGuard({ tracing: otelTracing() })`. The tracer is the
 * global provider's `loopguard` tracer by default, a no-op until the application registers an SDK.
 */
export function otelTracing(tracer: Tracer = trace.getTracer('loopguard')): CallTracing {
  return {
    startSpan(name, attributes): CallSpan {
      const span = tracer.startSpan(name, { kind: SpanKind.INTERNAL, attributes });
      return {
        setAttribute: (key, value) => void span.setAttribute(key, value),
        setError: () => void span.setStatus({ code: SpanStatusCode.ERROR }),
        runInside: (work) => context.with(trace.setSpan(context.active(), span), work),
        end: () => span.end(),
      };
    },
  };
}
