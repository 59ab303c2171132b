export * from './audit-projection.js';
export * from './ledger-projection.js';
export * from './progress-projection.js';
export * from './projections.js';
export * from './run-summary.js';
export * from './run-timeline.js';
export * from './runs-projection.js';
export * from './stops-projection.js';
