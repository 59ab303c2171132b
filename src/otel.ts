/**
 * `loopguard/otel`: each guarded call as an OpenTelemetry span, on `@opentelemetry/api` (an
 * optional package of loopguard: `npm install @opentelemetry/api`).
 * `createGuard({ tracing: otelTracing() })` uses the global tracer provider, `otelTracing(tracer)`
 * a tracer of yours.
 */
export { otelTracing } from './telemetry/otel-tracing.js';
