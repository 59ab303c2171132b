/**
 * `loopguard/metrics`: the guard's Prometheus metrics on prom-client (an optional package of
 * loopguard: `npm install prom-client`). `createGuard({ metrics: new LoopguardMetrics() })`, then
 * `guard.metrics()` is the text of `/metrics`; pass a registry of yours to serve both.
 */
export { LoopguardMetrics } from './telemetry/loopguard-metrics.js';
