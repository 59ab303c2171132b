export * from './run-actor.js';
export * from './run-machine.js';
