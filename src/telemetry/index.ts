export * from './call-telemetry.js';
export * from './guard-telemetry-ports.js';
export * from './loopguard-metrics.js';
export * from './otel-tracing.js';
