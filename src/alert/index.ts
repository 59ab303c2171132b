/** Public face of alerting: stop reports and fleet loop detections from the stops topic to stdout or a webhook. */
export * from './alert-sinks.js';
export * from './alert-subscriber.js';
export * from './deliver-with-retry.js';
export { toFleetLoopAlert } from './fleet-loop-alert.js';
export * from './stop-alert.js';
