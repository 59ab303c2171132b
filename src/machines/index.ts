export * from './manual-clock.js';
export * from './run-actor.js';
export * from './run-machine.js';
