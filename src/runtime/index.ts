export * from './call-result.js';
export type { ToolFn } from './execute-tool.js';
export * from './file-ledger.js';
export * from './guard.js';
export * from './guard-tools.js';
export * from './guarded-run.js';
export * from './ledger.js';
export * from './node-hashing.js';
export * from './tool-outcome.js';
