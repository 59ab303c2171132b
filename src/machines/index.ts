export * from './fold-run.js';
export * from './manual-clock.js';
export * from './run-actor.js';
export * from './run-machine.js';
