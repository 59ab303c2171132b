export * from './remote-guard.js';
export * from './remote-run.js';
