export * from './fold-run.js';
export { movesStatus, STATUS_MOVING_TYPES, statusStep } from './machine-step.js';
export * from './manual-clock.js';
export * from './run-actor.js';
export * from './run-machine.js';
