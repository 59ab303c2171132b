export * from './guard-worker.js';
export * from './open-service.js';
export * from './service-topics.js';
