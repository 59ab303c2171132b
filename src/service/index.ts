export * from './guard-worker.js';
export * from './open-service.js';
export * from './process-batch.js';
export * from './service-codec.js';
export * from './service-topics.js';
