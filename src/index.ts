/** loopguard: a runtime guard for AI-agent tool calls. The package's public face. */
export * from './domain/index.js';
export * from './events/index.js';
export * from './log/index.js';
export * from './machines/index.js';
export * from './projections/index.js';
export * from './runtime/index.js';
export * from './telemetry/index.js';
