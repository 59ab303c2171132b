export * from './recorded-run-fold.js';
export * from './what-if.js';
