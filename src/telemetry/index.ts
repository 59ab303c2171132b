export * from './call-telemetry.js';
export * from './loopguard-metrics.js';
